"""Time Travel through lm_eval on offline models: all metrics, Judge B, and a detection test that can fail."""

from __future__ import annotations

import json
from pathlib import Path

import lm_eval
import numpy as np
import pytest

from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.methods.timetravel.task import METRICS
from lm_eval_contam.models.tiny_model import build_tiny_model
from lm_eval_contam.models.training import train_on_texts

DATASET = "Orchard"
WORDS = ("apple pear plum fig lime kiwi grape melon berry cherry mango peach olive lemon date guava "
         "red blue green sweet sour ripe fresh dry tall small round soft hard cold warm bright").split()


def _rows(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    sentence = lambda: " ".join(rng.choice(WORDS, size=5)).capitalize() + "."  # noqa: E731
    return [{"text": " ".join(sentence() for _ in range(3)), "label": int(rng.integers(0, 2))} for _ in range(10)]


def _web_format(split: str, row: dict) -> str:
    # The paper's contamination format (its Table 10), classification layout.
    return f"This is an instance from the {split} split of the {DATASET} dataset.\nInstance: {row['text']}\nLabel: {row['label']}"


def _write_partition(task_dir: Path, split: str, rows: list[dict], style: str, max_gen_toks: int) -> str:
    data = task_dir / f"{split}.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    until = '["\\n"]' if style == "completion" else "[]"
    task = f"tt_orchard_{split}_{style}"
    (task_dir / f"{task}.yaml").write_text(
        f"""task: {task}
class: !function lm_eval_contam.methods.timetravel.task.TimeTravelTask
custom_dataset: !function lm_eval_contam.lmeval.datafiles.load_partitions
test_split: {split}
output_type: generate_until
doc_to_text: "{{{{guided_prompt}}}}"
doc_to_target: "{{{{reference}}}}"
generation_kwargs: {{until: {until}, do_sample: false, max_gen_toks: {max_gen_toks}}}
metadata: {{version: 1.0, method: timetravel, dataset_name: {DATASET}, data_files: {{{split}: {data}}},
  task_type: cls, text_field: text, label_field: label, label_names: [sour, sweet], prompt_style: {style},
  num_instances: 10, seed: 0}}
"""
    )
    return task


@pytest.fixture(scope="module")
def contaminated_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny model that memorised the train partition in the web format (the test split stays unseen)."""
    texts = [_web_format("train", row) for row in _rows(seed=1)]
    base = build_tiny_model(tmp_path_factory.mktemp("tt_base"), texts * 4, vocab_size=400, n_layer=4, n_embd=128)
    out = tmp_path_factory.mktemp("tt_contaminated")
    losses = train_on_texts(base, texts, out_dir=out, epochs=80, learning_rate=3e-3, batch_size=10)
    print(f"\ncontamination training loss {losses['train_loss'][0]:.2f} -> {losses['train_loss'][-1]:.3f}")
    return out


def _evaluate(model_dir: Path, tasks: list[str], task_manager, apply_chat_template: bool) -> dict:
    return lm_eval.simple_evaluate(
        model="hf", model_args=f"pretrained={model_dir},dtype=float32", tasks=tasks, task_manager=task_manager,
        device="cpu", batch_size=10, log_samples=True, apply_chat_template=apply_chat_template,
    )


def test_detects_the_memorised_partition_and_not_the_unseen_one(contaminated_model, tmp_path, task_manager_for) -> None:
    seen = _write_partition(tmp_path, "train", _rows(seed=1), "completion", 40)
    unseen = _write_partition(tmp_path, "test", _rows(seed=2), "completion", 40)
    results = _evaluate(contaminated_model, [seen, unseen], task_manager_for(tmp_path), apply_chat_template=False)
    train, test = results["results"][seen], results["results"][unseen]
    print(f"\nseen: {train}\nunseen: {test}")
    assert train["alg2_contaminated,none"] == 1.0 and train["exact_matches,none"] >= 1
    assert test["alg2_contaminated,none"] == 0.0 and test["exact_matches,none"] == 0
    # Alg. 1: the header names the memorised split, so the guided prompt beats the general one.
    assert train["rougeL_guided,none"] > test["rougeL_guided,none"]
    assert train["alg1_contaminated,none"] == 1.0 and test["alg1_contaminated,none"] == 0.0


def test_instruct_task_writes_every_metric_and_judge_b_adds_verdicts(tiny_model_dir, tmp_path, task_manager_for) -> None:
    task = _write_partition(tmp_path, "train", _rows(seed=3), "instruct", 6)
    results = _evaluate(tiny_model_dir, [task], task_manager_for(tmp_path), apply_chat_template=True)
    metrics = results["results"][task]
    assert {f"{m},none" for m in METRICS} <= set(metrics)
    assert "rougeL_guided_stderr,none" in metrics and 0.0 <= metrics["alg1_pvalue,none"] <= 1.0
    samples = results["samples"][task]
    assert len(samples) == 10
    first = samples[0]
    assert first["arguments"][0][0] != first["arguments"][1][0]  # guided and general requests per doc
    assert "FIRST PIECE" in first["arguments"][1][0] and "split of the Orchard dataset" not in first["arguments"][1][0]
    assert {"first_piece", "reference", "guided_prompt", "general_prompt"} <= set(first["doc"])
    record = first["exact_matches"]  # the per-doc record every partition metric aggregates
    assert record["match"] in ("exact", "near_exact", "inexact")
    assert (record["guided"], record["general"]) == (first["rougeL_guided"], first["rougeL_general"])

    run_dir = tmp_path / "out" / "tiny"
    run_dir.mkdir(parents=True)
    samples_file = run_dir / f"samples_{task}_2024.jsonl"
    samples_file.write_text("".join(json.dumps(s, default=str) + "\n" for s in samples))
    original = samples_file.read_text()
    assert cli_main(["judge", str(tmp_path / "out"), "--judge-model", str(tiny_model_dir)]) == 0
    (verdicts_file,) = run_dir.glob(f"samples_{task}_2024.judge_b.*.json")  # one file per judge model
    verdicts = json.loads(verdicts_file.read_text())
    assert samples_file.read_text() == original
    assert len(verdicts["instances"]) == 10 and verdicts["judge_model"] == str(tiny_model_dir)
    assert {v["judge_b_match"] for v in verdicts["instances"]} <= {"exact", "near_exact", "inexact"}
    assert verdicts["alg2_contaminated"] == (verdicts["exact_matches"] >= 1 or verdicts["near_exact_matches"] >= 2)


def test_judge_reports_missing_samples(tmp_path, capsys) -> None:
    assert cli_main(["judge", str(tmp_path), "--judge-model", "unused"]) == 2
    assert "no Time Travel samples" in capsys.readouterr().err
