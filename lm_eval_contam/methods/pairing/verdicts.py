"""The pairing test's verdicts from a run (read from each task's logged records, and its reference's)."""

from __future__ import annotations

from lm_eval_contam.core.relabelling import RecordsRelabelling, own_and_reference_tests
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.pairing.configs import METHOD
from lm_eval_contam.methods.pairing.task import pairing_statistics

NULL = ("the model never saw these instances: within each group, which second half goes with which first half is "
        "exchangeable in the double-centred log-likelihoods (each half's own level removed)")
REFERENCE_NULL = ("the fine-tune never saw these instances: within each group, which second half goes with which "
                  "first half is exchangeable in the double-centred u = log p(model) - log p(reference) (what the "
                  "reference shares with the model, e.g. a preference for coherent text, cancels in u)")
RECORD_METRIC = "pairing_pvalue"  # the metric each doc's record is logged under (every metric logs it)
RULE = (f"flagged when the Monte-Carlo relabelling p <= {ALPHA} (the true pairings' double-centred scores summed "
        "over groups are high among random pairings within each group)")
OWN, ON_REFERENCE = own_and_reference_tests(
    METHOD, "pairing", title="Pairing of halves (ours)", null=NULL,
    reference_title="Pairing of halves on u, against the reference model (ours)", reference_null=REFERENCE_NULL,
    rule=RULE)

RELABELLING = RecordsRelabelling(
    RECORD_METRIC, OWN, ON_REFERENCE, "pairings of first and second halves",
    unit="group", per_unit=lambda records: max(int(record["size"]) for record in records),
    statistic=lambda scores, records, seed, name: pairing_statistics(scores, [int(r["size"]) for r in records],
                                                                     seed=seed, name=name))
verdicts = RELABELLING.verdicts
reference_tests = RELABELLING.reference_tests  # MethodSpec.reference_tests: the test on u of one task
