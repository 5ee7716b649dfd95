"""The validation study's bookkeeping: strengths parsing and detection / false-positive rates from verdicts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from lm_eval_contam.errors import ContamError
from lm_eval_contam.verdict import Verdict

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "validation_study.py"
spec = importlib.util.spec_from_file_location("validation_study", SCRIPT)
study = importlib.util.module_from_spec(spec)
spec.loader.exec_module(study)


def test_strengths_parse_and_label() -> None:
    papers, strong = study.parse_strengths("5e-5:3:0.15,3e-4:6:0.5")
    assert (papers.learning_rate, papers.epochs, papers.share, papers.batch_size) == (5e-5, 3, 0.15, 1)
    assert study.strength_label(strong) == "lr0.0003_ep6_share0.5"
    with pytest.raises(ContamError, match="lr:epochs:share"):
        study.parse_strengths("5e-5:3")


def _verdict(model: str, dataset: str, split: str, method: str, flagged: bool) -> Verdict:
    return Verdict(model=model, partition=f"{dataset} {split}", family=method.partition("_")[0], method=method,
                   title=method, task="t", flagged=flagged, statistic=None, pvalue=None, confidence_interval=None,
                   n=None, null="", rule="", evidence=None)


def test_rates_split_injected_from_held_out_partitions() -> None:
    verdicts = [
        _verdict("strong", "Toy News", "train", "tt_alg1", True),
        _verdict("strong", "Toy Reviews", "train", "tt_alg1", False),
        _verdict("strong", "Toy News", "test", "tt_alg1", True),
        _verdict("strong", "Toy Reviews", "test", "tt_alg1", False),
        _verdict("strong", "Toy Pairs", "test", "tt_alg1", True),  # in neither list: ignored
        _verdict("clean", "Toy News", "train", "dcq_loglikelihood", False),
    ]
    rates = study.rates(verdicts, ["toy_news:train", "toy_reviews:train"], ["toy_news:test", "toy_reviews:test"])
    assert rates["strong"]["tt_alg1"] == {"injected": 0.5, "held_out": 0.5, "n_injected": 2, "n_held_out": 2}
    assert rates["clean"]["dcq_loglikelihood"]["injected"] == 0.0
    assert rates["clean"]["dcq_loglikelihood"]["n_held_out"] == 0
