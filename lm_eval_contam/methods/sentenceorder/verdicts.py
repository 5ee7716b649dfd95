"""The sentence-order test's verdicts from a run (read from each task's logged records, and its reference's)."""

from __future__ import annotations

from lm_eval_contam.core.relabelling import RecordsRelabelling, arrangement_test, own_and_reference_tests
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.sentenceorder.configs import METHOD

NULL = ("the model never saw these instances: which of each instance's scored sentence orders is its own is "
        "exchangeable (uniform over them), independently across instances")
REFERENCE_NULL = ("the fine-tune never saw these instances: which of each instance's scored sentence orders is its own "
                  "is exchangeable in u = log p(model) - log p(reference), independently across instances (what the "
                  "reference shares with the model, e.g. a preference for coherent text, cancels in u)")
RECORD_METRIC = "sentence_order_pvalue"  # the metric each doc's record is logged under (every metric logs it)
RULE = (f"flagged when the Monte-Carlo relabelling p <= {ALPHA} (the sum over instances of the own order's "
        "standardised score is high among the sums with each instance's own order redrawn)")
OWN, ON_REFERENCE = own_and_reference_tests(
    METHOD, "sentence_order", title="Sentence order (ours)", null=NULL,
    reference_title="Sentence order on u, against the reference model (ours)", reference_null=REFERENCE_NULL, rule=RULE)

RELABELLING = RecordsRelabelling(
    RECORD_METRIC, OWN, ON_REFERENCE, "sentence orders",
    unit="instance", per_unit=lambda records: max(len(record["scores"]) for record in records),
    statistic=lambda scores, records, seed, name: arrangement_test(scores, seed=seed, name=name))
verdicts = RELABELLING.verdicts
reference_tests = RELABELLING.reference_tests  # MethodSpec.reference_tests: the test on u of one task
