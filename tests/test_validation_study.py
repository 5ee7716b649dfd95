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


def test_generated_text_is_fresh_deterministic_and_labelled() -> None:
    rows = study.generated_rows(0, "train", 8)
    assert rows == study.generated_rows(0, "train", 8)
    assert [row["label"] for row in rows] == [0, 1, 2, 3, 0, 1, 2, 3]
    others = study.generated_rows(0, "test", 8) + study.generated_rows(1, "train", 8)
    assert not {row["text"] for row in rows} & {row["text"] for row in others}
    assert rows[1]["text"].count(".") == 3 and any(noun in rows[1]["text"] for noun in study.TOPICS["Sports"])


def test_generated_datasets_and_their_likelihood_tasks(tmp_path: Path) -> None:
    datasets = study.write_generated_datasets(tmp_path / "data", 2, 5)
    assert [d["dataset_name"] for d in datasets] == ["Study Set 0", "Study Set 1"]
    names = study.write_likelihood_tasks(tmp_path / "tasks", datasets, num_instances=5)
    assert names[:2] == ["likelihood_study_set_0_train", "likelihood_study_set_0_train_lift"] and len(names) == 8
    text = (tmp_path / "tasks" / "likelihood_study_set_1_test.yaml").read_text()
    assert '  control: "control"' in text and "  num_instances: 5" in text


def test_rates_carry_clopper_pearson_intervals() -> None:
    interval = study.clopper_pearson(0, 8)
    assert interval.low == 0.0 and interval.high == pytest.approx(1 - 0.025 ** (1 / 8))  # exact: (alpha/2)^(1/n)
    assert study.clopper_pearson(0, 0) is None
    verdicts = [_verdict("strong", "Study Set 0", "train", "likelihood_control", True),
                _verdict("strong", "Study Set 1", "train", "likelihood_control", False),
                _verdict("strong", "Study Set 0", "test", "likelihood_control", False)]
    table = study.split_rates(verdicts)
    assert table == {"strong": {"likelihood_control": {"train": [1, 2], "test": [0, 1]}}}
    assert "1/2 = 50% [1%, 99%]" in study.generated_markdown(table, {})
