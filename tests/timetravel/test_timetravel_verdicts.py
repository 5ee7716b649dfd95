"""Time Travel's verdicts combine the two prompt styles with a Bonferroni correction."""

from __future__ import annotations

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.methods.timetravel.verdicts import Alg1Evidence, styles_combined


def _permutation(style: str, p: float, partition: str = "Toy News train") -> Verdict:
    return Verdict(model="m", partition=partition, family="timetravel", test="tt_alg1_permutation", title="t",
                   task=f"timetravel_x_{style}", flagged=p <= 0.05, statistic=0.1, pvalue=p, confidence_interval=None,
                   n=12, null="", rule="", evidence=Alg1Evidence(0.2, 0.1, p, ()), variant=style)


def test_both_styles_give_one_bonferroni_verdict_per_partition() -> None:
    (combined,) = styles_combined([_permutation("instruct", 0.6), _permutation("completion", 0.02),
                                   _permutation("completion", 0.01, partition="Toy News test")])
    assert combined.partition == "Toy News train" and combined.test == "tt_styles_combined"
    assert combined.pvalue == 0.04 and combined.flagged  # 2 x 0.02
    assert combined.evidence.facts()[-1] == ("Bonferroni-adjusted p (min p × 2)", "0.0400")
    (weak,) = styles_combined([_permutation("instruct", 0.6), _permutation("completion", 0.03)])
    assert weak.pvalue == 0.06 and not weak.flagged  # 0.03 alone would have flagged: the correction bites
