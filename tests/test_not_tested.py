"""A method that cannot run on a partition says "not tested: <why>" on its verdict, and the audit goes on (issue 23,
item 6); small samples say what they are on the verdict (issue 23, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_contam.audit.own_data import OwnData, write_card, write_task_configs
from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.core.method_verdict import NotRun, not_run_verdict, sample_size_caveats, single_instance_caveats
from lm_eval_contam.core.partitions import Partition

# One-line questions with one replaceable word: the offline perturber cannot make four distinct options of them.
PLANETS = ["Mars", "Venus", "Earth", "Jupiter"]
QUESTIONS = ["Which planet is red?", "Which planet is hot?", "Which planet is ours?", "Which planet is big?"] * 3

MC_YAML = """task: planets_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {test}
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question}}}}"
doc_to_target: answer
doc_to_choice: choices
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""


def write_planets_task(root: Path) -> Path:
    """A 12-item multiple-choice task over local JSONL, one short question per item; its folder."""
    root.mkdir(parents=True)
    data = root / "test.jsonl"
    data.write_text("".join(json.dumps({"question": question, "choices": PLANETS, "answer": i % 4}) + "\n"
                            for i, question in enumerate(QUESTIONS)))
    (root / "planets_mc.yaml").write_text(MC_YAML.format(test=data))
    return root


def test_audit_tasks_on_one_line_questions_says_dcq_not_tested_and_scores_the_benchmark(
        tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    tasks = write_planets_task(tmp_path / "tasks")
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path", str(tasks),
                     "--max_gen_toks", "4", "--batch_size", "12", "--output_path", str(out),
                     "--tasks", "planets_mc"]) == 0
    verdicts = collect(load_run(out))
    dcq = [v for v in verdicts if v.family == "dcq"]
    assert [(v.partition, v.task, v.test, v.flagged, v.pvalue) for v in dcq] == [
        ("planets_mc test", "dcq_task_planets_mc_test_ll", "dcq_loglikelihood", None, None)]
    summary = dcq[0].evidence.summary()
    assert summary == ("not tested: no valid quiz options (no options produced (a completion that is not four A) .. D) "
                       "blocks, or no replaceable word))")
    # The rest of the audit ran: Time Travel and the lift mode decided, the benchmark has its score.
    assert {v.test for v in verdicts if v.family == "timetravel" and v.flagged is not None} >= {"tt_alg1_permutation"}
    assert any(v.test == "likelihood_lift" and v.pvalue is not None for v in verdicts)
    results = json.loads(sorted((out / "runs" / "tiny").rglob("results_*.json"))[-1].read_text())
    assert 0.0 <= results["results"]["planets_mc"]["acc,none"] <= 1.0
    assert "dcq_task_planets_mc_test_ll" not in results["results"]
    # The in-context test has no twin for these one-line questions either: not run, and said so.
    assert list(results["not_run"]) == ["dcq_task_planets_mc_test_ll", "incontext_task_planets_mc_test"]
    assert summary in (out / "report.md").read_text()


def _words_card(tmp_path: Path, words: list[str]) -> Partition:
    tmp_path.mkdir(parents=True)
    source = tmp_path / "words.jsonl"
    source.write_text("".join(json.dumps({"text": word}) + "\n" for word in words))
    return Partition.from_card(write_card(OwnData(str(source), "test", "Words", "text"), tmp_path / "audit"))


def test_time_travel_cannot_run_on_texts_too_short_to_cut(tmp_path: Path) -> None:
    from lm_eval_contam.methods.timetravel.method import cannot_run

    one_word = _words_card(tmp_path / "one", ["alpha", "beta", "gamma"])
    config = {"test_split": "test", "metadata": one_word.dataset.task_metadata()}
    assert cannot_run("timetravel_words_test", config) == NotRun(
        task="timetravel_words_test", family="timetravel", test="tt_alg1_permutation",
        title="Time Travel Alg. 1, permutation (ours)", partition="Words test", reason="texts too short to cut")
    two_words = _words_card(tmp_path / "two", ["alpha", "beta gamma"])  # one row can be cut: it runs
    assert cannot_run("timetravel_words_test", {"test_split": "test",
                                                "metadata": two_words.dataset.task_metadata()}) is None


def test_a_not_run_verdict_decides_nothing_and_says_why() -> None:
    verdict = not_run_verdict("tiny", NotRun("timetravel_words_test", "timetravel", "tt_alg1_permutation",
                                             "Time Travel Alg. 1, permutation (ours)", "Words test",
                                             "texts too short to cut"))
    assert (verdict.flagged, verdict.pvalue, verdict.n, verdict.decision) == (None, None, None, "no decision")
    assert verdict.evidence.summary() == "not tested: texts too short to cut"
    assert verdict.evidence.facts() == [("result", "not tested: texts too short to cut")]


def test_small_samples_say_so_on_the_verdict() -> None:
    assert sample_size_caveats(1000, 5) == ("asked for 1000 instances, the partition has 5",)
    assert sample_size_caveats(10, 10) == () and sample_size_caveats(10, None) == ()
    assert single_instance_caveats(1) == ("no test can flag at n = 1",)
    assert single_instance_caveats(2) == () and single_instance_caveats(None) == ()


TT = "timetravel_toy_news_train"


def _write_tt_run(directory: Path, *, asked: int, effective: int, limit: int | None = None) -> None:
    """A Time Travel task's lm-eval results: ``asked`` instances in its metadata, ``effective`` docs run."""
    metrics = {"rougeL_guided": 0.3, "rougeL_general": 0.2, "alg1_pvalue": 0.4, "alg1_contaminated": 0.0,
               "alg1_permutation_pvalue": 0.5, "alg2_contaminated": 0.0, "exact_matches": 0.0,
               "near_exact_matches": 0.0}
    results = {"results": {TT: {f"{key},none": value for key, value in metrics.items()}},
               "configs": {TT: {"output_type": "generate_until", "test_split": "train",
                                "metadata": {"method": "timetravel", "dataset": "toy_news", "prompt_style": "instruct",
                                             "num_instances": asked}}},
               "n-samples": {TT: {"original": effective, "effective": effective}},
               "config": {"model": "hf", "model_args": "pretrained=/m", "limit": limit}}
    directory.mkdir(parents=True)
    (directory / "results_2024-01-01T00-00-00.json").write_text(json.dumps(results))


def _tt_caveats(directory: Path) -> dict[str, tuple[str, ...]]:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    return {verdict.test: verdict.caveats for verdict in collect(load_run(directory))}


def test_time_travel_asked_for_more_instances_than_the_partition_has_says_so(tmp_path: Path) -> None:
    _write_tt_run(tmp_path / "small" / "m", asked=1000, effective=5)
    caveats = _tt_caveats(tmp_path / "small")
    assert sorted(caveats) == ["tt_alg1", "tt_alg1_permutation", "tt_alg2_judge_a"]
    assert all(found[0] == "asked for 1000 instances, the partition has 5" for found in caveats.values())
    _write_tt_run(tmp_path / "whole" / "m", asked=5, effective=5)
    assert _tt_caveats(tmp_path / "whole")["tt_alg1"] == ()
    _write_tt_run(tmp_path / "limited" / "m", asked=1000, effective=5, limit=5)  # --limit says why instead
    assert not any("asked for" in caveat for caveat in _tt_caveats(tmp_path / "limited")["tt_alg1"])


def test_one_instance_is_a_caveat_on_every_verdict_not_a_confident_not_flagged(tmp_path: Path) -> None:
    _write_tt_run(tmp_path / "one" / "m", asked=1, effective=1)
    caveats = _tt_caveats(tmp_path / "one")
    assert sorted(caveats) == ["tt_alg1", "tt_alg1_permutation", "tt_alg2_judge_a"]
    assert all("no test can flag at n = 1" in found for found in caveats.values())
    _write_tt_run(tmp_path / "two" / "m", asked=2, effective=2)
    assert not any("no test can flag at n = 1" in found for found in _tt_caveats(tmp_path / "two").values())


def test_a_one_row_partition_is_audited_with_the_caveat_on_its_verdicts(tiny_model_dir: Path, tmp_path: Path) -> None:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps({"text": "The harbour bridge was rebuilt after the storm. Workers finished it in "
                                          "the spring of that year."}) + "\n")
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--data", str(source),
                     "--split", "test", "--name", "One Row", "--text-field", "text", "--max_gen_toks", "4",
                     "--output_path", str(tmp_path / "audit")]) == 0
    verdicts = collect(load_run(tmp_path / "audit"))
    decided = [verdict for verdict in verdicts if verdict.n is not None]
    assert {verdict.family for verdict in decided} >= {"timetravel", "dcq"}
    assert all(verdict.n == 1 and "no test can flag at n = 1" in verdict.caveats for verdict in decided)
    # The lift mode compares with another instance's second piece: with one row it cannot run, and says so.
    (lift,) = [verdict for verdict in verdicts if verdict.family == "likelihood"]
    assert (lift.test, lift.variant, lift.flagged, lift.pvalue, lift.evidence.summary()) == (
        "likelihood_lift", "lift", None, None, "not tested: 1 text(s) long enough to cut, the lift needs at least 2")
    assert "no test can flag at n = 1" in (tmp_path / "audit" / "report.md").read_text()


def test_an_audit_no_method_can_run_is_one_line_naming_each_reason(tiny_model_dir: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    source = tmp_path / "words.jsonl"  # one word per row: nothing to cut, no word the perturber can vary alone
    source.write_text("".join(json.dumps({"text": word}) + "\n" for word in ("zzyzx", "qwxv", "xkcdq")))
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--data", str(source),
                     "--split", "test", "--name", "Words", "--text-field", "text",
                     "--output_path", str(tmp_path / "audit")]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "no method can run on the partitions: " in error
    assert "timetravel_words_test: texts too short to cut" in error
    assert "likelihood_words_test_lift: 0 text(s) long enough to cut, the lift needs at least 2" in error


def _long_row_rows() -> list[str]:
    """Eight short release notes around one ~15,000-token row (row 3)."""
    notes = [f"Release {n} of the exporter fixed the {word} bug in the parser. It reads old files again." for n, word
             in enumerate(["first", "second", "third", "fourth", "fifth"])]
    long_row = " ".join(f"Chapter {n} tells how the river flooded the valley town in spring." for n in range(300))
    return [*notes[:3], long_row, *notes[3:]]


def test_run_stops_in_one_line_on_a_task_whose_row_is_over_the_window(tiny_model_dir: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    """``run`` was asked for exactly these tasks: a method that cannot run on its partition stops it before any
    request (not lm-eval's assertion mid-run); the control-free in-context task is the one scoring whole rows."""
    source = tmp_path / "mine.jsonl"
    source.write_text("".join(json.dumps({"text": text}) + "\n" for text in _long_row_rows()))
    tasks = write_task_configs(Partition.from_card(write_card(OwnData(str(source), "test", "Mine", "text"),
                                                              tmp_path / "own")), tmp_path / "own")
    out = tmp_path / "out"
    assert cli_main(["run", "--model", "hf", "--model_args", f"pretrained={tiny_model_dir}", "--include_path",
                     str(tasks), "--tasks", "incontext_mine_test", "--output_path", str(out)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lm-eval-contam ")]
    assert errors == ["lm-eval-contam run: error: field '--tasks': cannot run on its partition: incontext_mine_test: "
                      "row 3 has 15036 tokens, over the model's window of 1024; leave it out of --tasks"]
    assert not out.exists()


def test_a_row_over_the_models_window_is_not_tested_where_it_would_be_a_continuation(tiny_model_dir: Path,
                                                                                      tmp_path: Path,
                                                                                      capsys: pytest.CaptureFixture
                                                                                      ) -> None:
    """lm-eval's local backends stop on a continuation longer than the window (an AssertionError, before this): the
    lift and in-context tests say so on the partition; the rolling modes score the long row whole, the rest runs."""
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    source = tmp_path / "mine.jsonl"
    source.write_text("".join(json.dumps({"text": text}) + "\n" for text in _long_row_rows()))
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_text("".join(json.dumps({"text": f"Version {n} exports reports of {n * 100} rows to the folder."})
                             + "\n" for n in range(1, 7)))
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--data", str(source), "--split",
                     "test", "--name", "Mine", "--text-field", "text", "--control-data", str(fresh),
                     "--control-split", "fresh", "--max_gen_toks", "4", "--batch_size", "12",
                     "--output_path", str(out)]) == 0
    lift = "row 3's second piece has 6199 tokens, over the model's window of 1024"
    incontext = "row 3 has 15036 tokens, over the model's window of 1024"
    assert [line for line in capsys.readouterr().out.splitlines() if " not tested: " in line] == [
        f"Mine test: likelihood_mine_test_lift not tested: {lift}",
        f"Mine test: incontext_mine_test not tested: {incontext}"]
    verdicts = {verdict.test: verdict for verdict in collect(load_run(out))}
    assert verdicts["likelihood_lift"].evidence.summary() == f"not tested: {lift}"
    assert verdicts["incontext_twin"].evidence.summary() == f"not tested: {incontext}"
    # The control mode scores every row whole (lm-eval's rolling log-likelihood, window by window): decided on the 6
    # rows and the control's 6, with no caveat about docs cut to the window (only its control's size); the quiz, whose
    # prompt was cut, says so.
    control = verdicts["likelihood_control"]
    assert control.pvalue is not None and control.n == 6 + 6 and control.caveats == (
        "compared with a control of 6 items (6 audited); the rates quoted were measured with controls of 24 items a "
        "side, so its power is below the detection rate quoted",)
    assert verdicts["dcq_loglikelihood"].caveats[-1].startswith("1 of 6 docs exceed the model's context window")


def test_option_order_is_not_tested_when_no_sampled_item_is_usable(tmp_path: Path) -> None:
    """The plan counts usable items over every row; the test samples. A big partition with two usable items among
    300 can sample none: "not tested" on that partition, not a task without docs that stops the audit."""
    from lm_eval_contam.core.partitions import dataset_from_task_metadata
    from lm_eval_contam.core.registry import AuditedModel
    from lm_eval_contam.methods.optionorder.method import cannot_run, task_names
    from lm_eval_contam.nullstudy.validation import render_question

    rows = [{"text": render_question(f"Which number is number {i}?", ["10", "20", "30", "40"]), "answer": "A",
             "choices": list("ABCD")} for i in range(298)]  # sorted options: left out on purpose
    rows[7] = {"text": render_question("Which fruit is yellow?", ["pear", "apple", "banana", "kiwi"]), "answer": "C",
               "choices": list("ABCD")}
    rows[150] = {"text": render_question("Which colour is the sky?", ["red", "blue", "green", "brown"]),
                 "answer": "B", "choices": list("ABCD")}
    data = tmp_path / "quiz.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    spec = dataset_from_task_metadata({"dataset_name": "Big Quiz", "data_files": {"test": str(data)},
                                       "task_type": "question", "text_field": "text", "label_field": "answer",
                                       "columns": ["text", "answer"], "companion_field": "answer"})
    partition = spec.partition("test")
    assert task_names(partition, AuditedModel(chat=False, plain_text=True)) == ["optionorder_big_quiz_test"]  # planned
    entry = cannot_run("optionorder_big_quiz_test", {"test_split": "test", "metadata": spec.task_metadata()})
    assert entry is not None and entry.test == "option_order" and entry.partition == "Big Quiz test"
    assert entry.reason.startswith("no multiple-choice item the option-order test can use (100 left out: ")


def test_option_order_is_not_tested_on_an_item_with_more_choices_than_letters(tmp_path: Path) -> None:
    """Issue 30, item 5: an item with 30 choices (options listed after the prompt, lettered A-Z) was an IndexError
    mid-audit, after the cards, data, quiz options and YAMLs were written; every rerun failed the same way. Now the
    test says "not tested" on the partition before the run and the audit goes on."""
    from lm_eval_contam.core.partitions import dataset_from_task_metadata
    from lm_eval_contam.core.registry import AuditedModel
    from lm_eval_contam.methods.optionorder.method import cannot_run, task_names

    rows = [{"text": f"Question: Which {tree} is number 7?\nAnswer:", "answer": f"{tree} 7",
             "choices": [f"{tree} {n * 7 % 30}" for n in range(30)]}  # each item its own options, in no sorted order
            for tree in ("oak", "elm", "ash", "fir", "yew", "pine")]
    data = tmp_path / "wide.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    spec = dataset_from_task_metadata({"dataset_name": "Wide Quiz", "data_files": {"test": str(data)},
                                       "task_type": "question", "text_field": "text", "label_field": "answer",
                                       "columns": ["text", "answer"], "companion_field": "answer"})
    partition = spec.partition("test")
    assert task_names(partition, AuditedModel(chat=False, plain_text=True)) == ["optionorder_wide_quiz_test"]
    entry = cannot_run("optionorder_wide_quiz_test", {"test_split": "test", "metadata": spec.task_metadata()})
    assert entry is not None and entry.partition == "Wide Quiz test"
    assert entry.reason == "row 0 has 30 choices; the test letters the options A-Z (26 at most)"
