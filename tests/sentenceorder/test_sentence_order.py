"""The sentence-order test (ours): its sentences and orders, exact; and on tiny models whose contamination we know,
against the base model they were fine-tuned from (u), the fine-tune on the items flagged and the one on other items
of the same grammar not."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.methods.sentenceorder.orders import sentence_orders, sentences
from lm_eval_contam.methods.sentenceorder.task import SentenceOrderSettings, sentence_order_docs
from lm_eval_contam.models.training import train_on_texts


def test_sentences_split_at_ends_before_a_capital_digit_or_quote_and_keep_closing_quotes() -> None:
    text = ('The council met at 7:02 p.m. with all five present.  "It is done," she said. (See item 4.) '
            'Work begins April 15! Why? 2026 was late... e.g. the culvert.')
    assert sentences(text) == ["The council met at 7:02 p.m. with all five present.", '"It is done," she said.',
                               "(See item 4.)", "Work begins April 15!", "Why?", "2026 was late... e.g. the culvert."]
    assert sentences("one sentence without an end") == ["one sentence without an end"]
    assert sentences("   ") == []


def test_orders_start_with_the_original_give_each_text_once_and_follow_the_seed_and_identity() -> None:
    four = ["A a.", "B b.", "C c.", "D d."]
    orders = sentence_orders(four, arrangements=24, seed=0, identity="x")
    assert orders[0] == (0, 1, 2, 3) and sorted(orders) == sorted(itertools.permutations(range(4)))
    assert orders == sentence_orders(four, arrangements=24, seed=0, identity="x")
    assert orders != sentence_orders(four, arrangements=24, seed=0, identity="y")
    assert len(sentence_orders(four, arrangements=5, seed=0, identity="x")) == 5
    assert sentence_orders(["A a.", "B b."], arrangements=24, seed=0, identity="x") == [(0, 1), (1, 0)]
    # A repeated sentence: aab, aba, baa are the only texts; seven equal sentences have one.
    repeated = sentence_orders(["A.", "A.", "B."], arrangements=24, seed=0, identity="x")
    assert len(repeated) == 3 and len({tuple(["A.", "A.", "B."][i] for i in o) for o in repeated}) == 3
    assert sentence_orders(["A."] * 7, arrangements=24, seed=0, identity="x") == [tuple(range(7))]
    many = sentence_orders([f"S{i}." for i in range(7)], arrangements=24, seed=0, identity="x")
    assert len(set(many)) == 24 and many[0] == tuple(range(7))  # a sample of 7! = 5040


NAMES = ["Arlo", "Bryn", "Cato", "Dara", "Esme", "Finn", "Gale", "Hugo", "Ines", "Jude", "Kira", "Lars", "Mira", "Nico",
         "Oren", "Pia", "Quin", "Rhea", "Soren", "Tova", "Uma", "Vito", "Wren", "Yara", "Zeno", "Abel", "Beda", "Cyra",
         "Dov", "Elin", "Fitz", "Greer", "Hale", "Ivo", "Jory", "Kai"]
GRAMMAR = {"verb": ["painted", "carried", "found", "sold", "mended", "watched"],
           "object": ["a blue kettle", "the old boat", "a copper bell", "the red kite", "a wooden chair", "the map"],
           "place": ["near the harbour", "in the barn", "at noon", "by the river", "after supper", "in the square"]}


def grammar_items(offset: int, count: int) -> list[str]:
    """Instances of three sentences about one person each, drawn independently from one grammar: their order is
    exchangeable for any model that did not see them (the study's synthetic datasets are built the same way)."""
    rng = np.random.default_rng(offset)
    return [" ".join(" ".join([NAMES[offset + i], *(str(rng.choice(GRAMMAR[part])) for part in GRAMMAR)]) + "."
                     for _ in range(3)) for i in range(count)]


def _partition(path: Path, texts: list[str]) -> Partition:
    path.write_text("".join(json.dumps({"text": text}) + "\n" for text in texts))
    return Partition.from_task_metadata({"dataset_name": "Grammar items", "data_files": {"test": str(path)},
                                         "task_type": "question", "text_field": "text", "columns": ["text"]}, "test")


def test_docs_score_every_order_of_each_instance_and_leave_one_sentence_instances_out(tmp_path: Path) -> None:
    texts = [*grammar_items(0, 3), "A single sentence here."]
    settings = SentenceOrderSettings(_partition(tmp_path / "rows.jsonl", texts), num_instances=100, arrangements=24,
                                     seed=0)
    docs = sentence_order_docs(settings, settings.partition.rows())
    assert [doc["row_index"] for doc in docs] == [0, 1, 2]
    assert all(len(doc["texts"]) == 6 and doc["texts"][0] == texts[doc["row_index"]] and doc["left_out"] == 1
               for doc in docs)
    only = SentenceOrderSettings(_partition(tmp_path / "one.jsonl", ["One sentence.", "Another one"]),
                                 num_instances=100, seed=0, arrangements=24)
    with pytest.raises(ContamError, match="none of the 2 sampled instance"):
        sentence_order_docs(only, only.partition.rows())


@pytest.fixture(scope="module")
def grammar_study(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two fine-tunes of the tiny base: one on the audited items (and others of the grammar), one on the others only;
    each model's run of the audited partition's sentence-order task."""
    from lm_eval_contam import task_dir
    from lm_eval_contam.core.registry import RenderTarget
    from lm_eval_contam.methods.sentenceorder.method import SPEC
    from lm_eval_contam.nullstudy.design import StudySettings
    from lm_eval_contam.nullstudy.study import evaluate

    root = tmp_path_factory.mktemp("sentence_order")
    audited, others = grammar_items(0, 24), grammar_items(24, 12)
    found = {"base": tiny_model_dir}
    for name, texts in (("injected", audited + others), ("filler", others)):
        found[name] = root / name
        train_on_texts(tiny_model_dir, texts * 2, out_dir=found[name], epochs=80, learning_rate=1e-3, batch_size=4,
                       seed=0)
    partition = _partition(root / "rows.jsonl", audited)
    assert SPEC.render_task_configs(partition, RenderTarget(task_dir(), root / "options.json")) == {}  # no reference
    configs = SPEC.render_task_configs(partition, RenderTarget(task_dir(), root / "options.json", reference=True))
    (root / "tasks").mkdir()
    for name, text in configs.items():
        (root / "tasks" / f"{name}.yaml").write_text(text)
    found["tasks"], (found["task"],) = root / "tasks", list(configs)
    for name in ("base", "injected", "filler"):
        found[f"run_{name}"] = evaluate(root / "tasks", list(configs), found[name], root / "runs" / name,
                                        StudySettings(batch_size=32))
    return found


def _verdicts(study: dict[str, Path], model: str, reference: str | None) -> dict[str, object]:
    from lm_eval_contam.core.rundir import load_model_dir
    from lm_eval_contam.methods.sentenceorder.verdicts import verdicts

    base = load_model_dir(study[f"run_{reference}"], label=reference) if reference else None
    return {v.test: v for v in verdicts(load_model_dir(study[f"run_{model}"], label=model, reference=base))}


def test_on_u_the_fine_tune_on_the_items_is_flagged_and_the_one_on_other_items_of_the_grammar_is_not(
        grammar_study: dict[str, Path]) -> None:
    injected = _verdicts(grammar_study, "injected", "base")
    assert set(injected) == {"sentence_order", "sentence_order_reference"}
    on_u = injected["sentence_order_reference"]
    assert on_u.flagged and on_u.pvalue < 0.01 and on_u.n == 24 and on_u.evidence.per_unit == 6
    assert not _verdicts(grammar_study, "filler", "base")["sentence_order_reference"].flagged
    itself = _verdicts(grammar_study, "filler", "filler")["sentence_order_reference"]
    assert itself.pvalue == 1.0 and itself.statistic == 0.0  # u is 0 for every text
    assert set(_verdicts(grammar_study, "injected", None)) == {"sentence_order"}


def test_run_with_a_reference_model_writes_the_test_on_u_into_the_tasks_row(
        grammar_study: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval_contam.cli import main as cli_main

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    assert cli_main(["run", "--model", "hf", "--model_args", f"pretrained={grammar_study['injected']}",
                     "--reference-model", str(grammar_study["base"]), "--include_path", str(grammar_study["tasks"]),
                     "--tasks", str(grammar_study["task"]), "--batch_size", "32", "--device", "cpu",
                     "--output_path", str(tmp_path / "out")]) == 0
    (path,) = (tmp_path / "out").rglob("results_*.json")
    row = json.loads(path.read_text())["results"][str(grammar_study["task"])]
    audited = _verdicts(grammar_study, "injected", "base")["sentence_order_reference"]
    assert row["sentence_order_reference_pvalue,none"] == pytest.approx(audited.pvalue, abs=2e-4)
    assert row["sentence_order_reference_z,none"] == pytest.approx(audited.statistic, rel=1e-3)


def test_the_audit_plans_the_task_only_with_a_reference_model() -> None:
    from lm_eval_contam.audit.job import partition_tasks

    assert "sentenceorder_toy_news_test" in partition_tasks("toy_news:test", ["loglikelihood"], reference=True)
    assert not any(task.startswith("sentenceorder_") for task in partition_tasks("toy_news:test", ["loglikelihood"]))
    assert not any(task.startswith("sentenceorder_")
                   for task in partition_tasks("ag_news:test", ["loglikelihood"], reference=True))  # a Hub dataset
