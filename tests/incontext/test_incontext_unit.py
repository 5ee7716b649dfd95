"""The in-context test: contexts drawn per doc, gains, and the sign-flip test's level and power."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.methods.incontext import context_for, gain, incontext_docs, incontext_test

TEXTS = [f"Instance number {i} of the toy dataset." for i in range(6)]


def test_context_holds_other_instances_only_seeded_by_the_doc() -> None:
    context = context_for(TEXTS, 2, size=3, seed=0, identity="Toy train:2")
    assert context.endswith("\n\n") and TEXTS[2] not in context
    assert len([t for t in TEXTS if t in context]) == 3
    assert context == context_for(TEXTS, 2, size=3, seed=0, identity="Toy train:2")
    assert {context_for(TEXTS, 2, size=3, seed=0, identity=f"Toy train:{i}") for i in range(20)} != {context}
    with pytest.raises(ContamError, match="needs at least 4"):
        context_for(TEXTS[:3], 0, size=3, seed=0, identity="x")


def test_docs_skip_instances_without_a_twin() -> None:
    docs = incontext_docs(TEXTS, list(range(10, 16)), lambda text: None if "3" in text else text.upper(),
                          context_instances=3, seed=0, partition_label="Toy train")
    assert [doc.row_index for doc in docs] == [10, 11, 12, 14, 15]
    assert docs[0].twin == TEXTS[0].upper() and TEXTS[0] not in docs[0].context


def test_gain_is_per_byte() -> None:
    assert gain(-10.0, -30.0, 40) == 0.5
    with pytest.raises(ContamError):
        gain(0.0, 0.0, 0)


def test_result_numbers() -> None:
    records = [{"instance_gain": -0.1, "twin_gain": 0.3}, {"instance_gain": 0.1, "twin_gain": 0.3},
               {"instance_gain": 0.2, "twin_gain": 0.2}]
    result = incontext_test(records)
    assert result.statistic == pytest.approx((0.4 + 0.2 + 0.0) / 3) and result.n == 3
    assert result.codec_score == pytest.approx(1 / 3)  # one instance lost likelihood in context
    assert result.instance_gain == pytest.approx(0.2 / 3) and result.twin_gain == pytest.approx(0.8 / 3)
    assert result.pvalue == pytest.approx(2 / 8)  # exact: 8 sign flips, 2 with a mean >= 0.2


SIMULATIONS = 200  # the sign-flip test itself is level-checked in tests/timetravel and tests/likelihood


def _rejection_rate(shift: float, n: int, simulations: int = SIMULATIONS) -> float:
    rng = np.random.default_rng(n)
    flagged = []
    for k in range(simulations):
        domain = rng.normal(0.3, 0.2, size=n)  # how much context helps this instance's domain
        records = [{"instance_gain": d - shift + rng.laplace(0, 0.05), "twin_gain": d + rng.laplace(0, 0.05)}
                   for d in domain]
        flagged.append(incontext_test(records, seed=k).significant(ALPHA))
    return float(np.mean(flagged))


@pytest.mark.parametrize("n", [10])
def test_sign_flip_holds_its_level_when_instance_and_twin_gain_alike(n: int) -> None:
    rate = _rejection_rate(0.0, n)
    assert rate <= ALPHA + 3 * (ALPHA * (1 - ALPHA) / SIMULATIONS) ** 0.5, rate


def test_detects_instances_that_gain_less_than_their_twins() -> None:
    assert _rejection_rate(0.1, 24, simulations=50) >= 0.8


def test_swaps_repeated_across_items_are_measured_by_their_design_effect() -> None:
    """Issue 30, item 3: twins that swap the same word in many items share its effect (templated items); twins that
    each swap words of their own do not."""
    from lm_eval_contam.methods.incontext.docs import MAX_DESIGN_EFFECT, swap_clustering, swapped_words

    assert swapped_words("Question: Which hen lays eggs?\nAnswer:", "Query: Which hen lays eggs?\nAnswer:") == {
        "question"}
    templated = [{"text": f"Question: which {noun}?", "twin": f"Query: which {noun}?"} for noun in "abcdefgh"]
    own = [{"text": f"word{i} here", "twin": f"other{i} here"} for i in range(8)]
    found = swap_clustering(templated)
    assert (found.word, found.twins, found.docs) == ("question", 8, 8) and found.design_effect > MAX_DESIGN_EFFECT
    assert swap_clustering(own).design_effect == 1.0
    assert swap_clustering(own[:4] + templated[:4]).design_effect == (4 + 16) / 8  # half the twins share one swap
    assert swap_clustering([{"text": "same", "twin": "same"}]).design_effect == 1.0


def test_the_in_context_test_is_not_tested_on_a_templated_partition(tmp_path) -> None:
    """Before the run (``cannot_run``): one replaceable word in every item is "not tested: <why>"; the shipped sample
    partitions, whose twins each swap words of their own, run as before."""
    import json

    from lm_eval_contam.audit.own_data import OwnData, write_card
    from lm_eval_contam.core.partitions import Partition, sample_partitions
    from lm_eval_contam.methods.incontext.method import why_not_run
    from lm_eval_contam.methods.incontext.task import InContextSettings

    source = tmp_path / "templated.jsonl"
    source.write_text("".join(json.dumps({"text": f"In which year did the {noun} open?"}) + "\n" for noun in (
        "bakery", "harbour", "museum", "library", "theatre", "stadium", "garden", "bridge", "market", "castle",
        "station", "school", "hospital", "factory", "chapel", "tower")))
    partition = Partition.from_card(write_card(OwnData(str(source), "test", "Years", "text"), tmp_path / "own"))
    reason = why_not_run(InContextSettings(partition, num_instances=100, seed=0, context_instances=3), partition.rows(), None)
    assert reason is not None and reason.startswith("the twins repeat their swaps across items (")
    assert "design effect" in reason and reason.endswith("so they are not symmetric about 0 under H0")
    for sample in sample_partitions():
        assert why_not_run(InContextSettings(sample, num_instances=100, seed=0, context_instances=3), sample.rows(), None) is None
