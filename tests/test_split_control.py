"""``audit --tasks``: the task's own second split is the control by default (issue 39, item 4).

A task naming a ``validation_split`` (then ``training_split``, then ``fewshot_split``) beside its evaluation split gets
that split as its control with no flag, assumed exchangeable with the audited one; a task with one split says so; an
explicit ``--control-split``/``--control-data`` wins and ``--no-split-control`` turns it off. Before the control is
used the two splits are compared: their rendered docs' character lengths (always) and, with a reference model, the
reference's own log-likelihood per byte of both splits' texts (at verdict time), each a two-sided Mann-Whitney U at
``SPLIT_CHECK_ALPHA``; a pair that differs reads "not tested: the splits differ" in the control tests and the other
verdicts stand. The check's level is simulated here on random splits of one pool of the study's authored texts.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from scipy import stats

from lm_eval_contam.audit.benchmark_partitions import (
    NO_CONTROL,
    NO_SECOND_SPLIT,
    derive_partitions,
    requested_control,
    split_lengths_test,
    write_partition,
)
from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.formatting import p_equals
from lm_eval_contam.core.overlap import ControlOverlap
from lm_eval_contam.core.partitions import Control, Partition
from lm_eval_contam.core.stats import SPLIT_CHECK_ALPHA, splits_differ, splits_differ_test
from lm_eval_contam.lmeval.benchmark_docs import load_tasks, second_split
from lm_eval_contam.methods.likelihood.configs import render_task_config
from lm_eval_contam.methods.likelihood.verdicts import SplitChecks, splits_difference

FRESH = Path(__file__).resolve().parents[1] / "lm_eval_contam" / "nullstudy" / "fresh"
ASSUMED = ("split validation: the task's own validation split, assumed exchangeable with the audited split; a model "
           "trained on it loses power, never level")


def texts(name: str) -> list[str]:
    """The validation study's authored texts of one fresh collection (``free_<name>_a``/``_b``: 24 each)."""
    return [json.loads(line)["text"] for line in (FRESH / f"free_{name}.jsonl").read_text().splitlines()]


FREE_YAML = """task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
{files}
{splits}
output_type: generate_until
doc_to_text: "{{{{text}}}}"
doc_to_target: " done"
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 2
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""


def write_task(tasks: Path, name: str, splits: dict[str, list[str]], named: dict[str, str]) -> None:
    """A free-text task over one JSONL per split (``splits``: split -> texts); ``named``: its ``*_split`` keys."""
    files = []
    for split, rows in splits.items():
        path = tasks.parent / f"{name}_{split}.jsonl"
        path.write_text("".join(json.dumps({"text": text}) + "\n" for text in rows))
        files.append(f"    {split}: {path}")
    (tasks / f"{name}.yaml").write_text(FREE_YAML.format(
        name=name, files="\n".join(files), splits="\n".join(f"{key}: {value}" for key, value in named.items())))


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``notes_two``: test + validation of one style and length (labnotes a/b, lengths p = 0.52); ``notes_one``: test
    only; ``notes_long``: its validation docs are two notes each (the splits differ in length); ``notes_shouting``:
    its validation docs are the other notes upper-cased (same lengths, a style the reference tells apart);
    ``notes_shared``: each validation doc asks another question of a test doc's note (every passage in both splits)."""
    tasks = tmp_path_factory.mktemp("split_control") / "tasks"
    tasks.mkdir()
    test, other = texts("labnotes_a"), texts("labnotes_b")
    both = {"test_split": "test", "validation_split": "validation"}
    write_task(tasks, "notes_two", {"test": test, "validation": other}, both)
    write_task(tasks, "notes_one", {"test": test}, {"test_split": "test"})
    write_task(tasks, "notes_long", {"test": test, "validation": [f"{a} {b}" for a, b in zip(other, other[1:])]},
               both)
    write_task(tasks, "notes_shouting", {"test": test, "validation": [text.upper() for text in other]}, both)
    write_task(tasks, "notes_shared", {"test": [f"{note}\nWhat does the note record?" for note in test],
                                       "validation": [f"{note}\nWho wrote the note?" for note in test]}, both)
    return tasks


def _task(evaluated: str, names: dict[str, str | None], available: tuple[str, ...]) -> SimpleNamespace:
    config = SimpleNamespace(test_split=evaluated, validation_split=None, training_split=None, fewshot_split=None)
    for key, value in names.items():
        setattr(config, key, value)
    return SimpleNamespace(config=config, dataset={split: [] for split in available})


@pytest.mark.parametrize(("evaluated", "names", "available", "chosen"), [
    ("test", {"validation_split": "validation", "training_split": "train", "fewshot_split": "dev"},
     ("test", "validation", "train", "dev"), "validation"),
    ("test", {"training_split": "train", "fewshot_split": "dev"}, ("test", "train", "dev"), "train"),
    ("test", {"fewshot_split": "dev"}, ("test", "dev"), "dev"),
    # lm-eval evaluates the validation split when the task names no test split: the control is its train split
    (None, {"validation_split": "validation", "training_split": "train"}, ("validation", "train"), "train"),
    # a split the config names that is the evaluated one, or that the dataset lacks, is never chosen
    ("test", {"validation_split": "test", "training_split": "train"}, ("test", "train"), "train"),
    ("test", {"validation_split": "validation", "training_split": "train"}, ("test", "train"), "train"),
    ("test", {}, ("test", "validation"), None),  # a split the task does not name is not its second split
])
def test_the_second_split_is_validation_then_train_then_fewshot_never_the_audited_one(
        evaluated: str | None, names: dict, available: tuple[str, ...], chosen: str | None) -> None:
    assert second_split(_task(evaluated, names, available)) == chosen


def test_the_lengths_check_holds_its_level_on_random_splits_of_one_pool() -> None:
    """H0 of the check: the two splits are random draws of one pool. Random halves of the study's 384 authored
    free-text notes (16 collections of 24), and 24 against 24 drawn from them as the methods' sample would be: the
    rejection rate must be SPLIT_CHECK_ALPHA within the binomial bound of the repetitions (99.9 %)."""
    pool = [text for path in sorted(FRESH.glob("free_*.jsonl")) for text in texts(path.stem.removeprefix("free_"))]
    assert len(pool) == 384
    rng = np.random.default_rng(39)
    repetitions = 2000
    for size in (len(pool) // 2, 24):
        rejected = 0
        for _ in range(repetitions):
            order = rng.permutation(len(pool))
            first, second = [pool[i] for i in order[:size]], [pool[i] for i in order[size:2 * size]]
            rejected += splits_differ(split_lengths_test(first, second).pvalue)
        low, high = stats.binom.ppf([0.0005, 0.9995], repetitions, SPLIT_CHECK_ALPHA)
        assert low <= rejected <= high, (size, rejected / repetitions)


def test_the_check_catches_splits_cut_by_length() -> None:
    """Not exchangeable: the pool split at its median length. Whole halves differ beyond doubt, and 24 against 24
    drawn from them are caught nearly always."""
    pool = sorted((text for path in sorted(FRESH.glob("free_*.jsonl"))
                   for text in texts(path.stem.removeprefix("free_"))), key=len)
    short, long = pool[:192], pool[192:]
    assert split_lengths_test(short, long).pvalue < 1e-50
    rng = np.random.default_rng(4)
    caught = sum(splits_differ(split_lengths_test(list(rng.choice(short, 24, replace=False)),
                                                  list(rng.choice(long, 24, replace=False))).pvalue)
                 for _ in range(200))
    assert caught == 200


def test_the_reference_check_is_the_same_test_on_log_likelihoods_per_byte() -> None:
    """The lengths check's two-sided test on continuous scores (the reference's, at verdict time, one-sided below)
    holds its level on exchangeable draws and catches a shift of one null standard deviation at 24 against 24."""
    rng = np.random.default_rng(5)
    null = sum(splits_differ(splits_differ_test(rng.normal(-2, 0.3, 24), rng.normal(-2, 0.3, 24)).pvalue)
               for _ in range(2000))
    low, high = stats.binom.ppf([0.0005, 0.9995], 2000, SPLIT_CHECK_ALPHA)
    assert low <= null <= high
    shifted = sum(splits_differ(splits_differ_test(rng.normal(-2, 0.3, 24), rng.normal(-2.3, 0.3, 24)).pvalue)
                  for _ in range(200))
    assert shifted >= 180


def test_the_reference_check_is_one_sided_the_audited_split_easier() -> None:
    """The split-label tests are one-sided (the audited split scores better): a control the reference finds easier
    costs them power only and passes the check; one it finds harder (the audited split easier for a model that saw
    neither) is caught. The one-sided check holds its level on exchangeable draws."""
    rng = np.random.default_rng(6)
    null = sum(splits_differ(splits_differ_test(rng.normal(-2, 0.3, 96), rng.normal(-2, 0.3, 96),
                                                alternative="greater").pvalue) for _ in range(2000))
    low, high = stats.binom.ppf([0.0005, 0.9995], 2000, SPLIT_CHECK_ALPHA)
    assert low <= null <= high
    easier_control = [splits_differ(splits_differ_test(rng.normal(-2.3, 0.3, 24), rng.normal(-2, 0.3, 24),
                                                       alternative="greater").pvalue) for _ in range(200)]
    easier_audited = [splits_differ(splits_differ_test(rng.normal(-2, 0.3, 24), rng.normal(-2.3, 0.3, 24),
                                                       alternative="greater").pvalue) for _ in range(200)]
    assert (sum(easier_control), sum(easier_audited) >= 190) == (0, True)


def test_a_control_differs_by_its_compared_texts_or_by_the_reference_and_only_an_assumed_one_is_checked() -> None:
    assumed = Control("split", "validation", "validation", assumed=True, lengths_pvalue=0.5)
    assert splits_difference(assumed, SplitChecks()) is None
    assert splits_difference(assumed, SplitChecks(0.3, SimpleNamespace(pvalue=0.2))) is None
    assert splits_difference(assumed, SplitChecks(0.3, SimpleNamespace(pvalue=0.01))) == (
        "the reference model's log-likelihood per byte, higher on the audited split: Mann-Whitney U p = 0.0100")
    assert splits_difference(assumed, SplitChecks(0.002)) == (
        "the compared items' character 3-grams and lengths: kernel two-sample relabelling p = 0.0020")
    # the whole splits' lengths decide only for runs logged before the compared texts were checked
    short = Control("split", "validation", "validation", assumed=True, lengths_pvalue=0.003)
    assert splits_difference(short, SplitChecks()) == "character lengths of the rendered docs: Mann-Whitney U p = 0.0030"
    assert splits_difference(short, SplitChecks(0.4)) is None
    given = Control.of_split("validation")  # --control-split: the user's choice, not checked
    assert splits_difference(given, SplitChecks(0.0001, SimpleNamespace(pvalue=0.0001))) is None


def test_the_card_and_the_task_yaml_carry_the_assumed_control(task_dir: Path, tmp_path: Path) -> None:
    from lm_eval_contam import harness

    loaded = load_tasks(["notes_two", "notes_one", "notes_long"], harness.task_manager((str(task_dir),)))
    two, one, long = derive_partitions(loaded)
    assert (two.control.split, one.control.split, one.no_control) == ("validation", None, NO_SECOND_SPLIT)
    lengths = split_lengths_test(texts("labnotes_a"), texts("labnotes_b"))
    assert two.control.lengths_pvalue == pytest.approx(lengths.pvalue) and not splits_differ(lengths.pvalue)
    assert splits_differ(long.control.lengths_pvalue)
    partition = Partition.from_card(write_partition(two, tmp_path))
    assert partition.control == Control("split", "validation", "validation", assumed=True,
                                        lengths_pvalue=float(lengths.pvalue), overlap=ControlOverlap(0, 24))
    assert partition.control.describe() == ASSUMED
    text = render_task_config(partition, "control")
    metadata = yaml.safe_load(text[text.index("metadata:"):])["metadata"]
    assert metadata["control"] == {"kind": "split", "source": "validation", "assumed": True,
                                   "lengths_pvalue": pytest.approx(lengths.pvalue),
                                   "overlap": {"shared": 0, "near": 0, "rows": 24}}
    assert Partition.from_task_metadata(metadata, "test").control == partition.control
    # --no-split-control and an explicit control: no assumed split
    assert [p.control for p in derive_partitions(loaded, NO_CONTROL)] == [Control()] * 3
    [given] = derive_partitions({"notes_two": loaded["notes_two"]}, requested_control(split="validation"))
    assert (given.control, given.statement()) == (
        replace(Control.of_split("validation"), overlap=ControlOverlap(0, 24)), None)


def test_a_second_split_that_is_the_audited_data_is_no_control_and_no_error(tmp_path: Path) -> None:
    from lm_eval_contam import harness

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    same = texts("labnotes_a")
    write_task(tasks, "notes_copy", {"test": same, "validation": same},
               {"test_split": "test", "validation_split": "validation"})
    [copy] = derive_partitions(load_tasks(["notes_copy"], harness.task_manager((str(tasks),))))
    assert copy.control == Control() and copy.statement() == (
        "notes_copy test: the task's validation split is not a control (control shares 24 of 24 rows (100%) with the "
        "audited data, 50% or more): the with-control verdict is not computed")


def test_a_card_refuses_an_assumed_file_or_a_lengths_p_out_of_range(tmp_path: Path) -> None:
    (tmp_path / "test.jsonl").write_text('{"text": "a note"}\n')
    (tmp_path / "validation.jsonl").write_text('{"text": "another note"}\n')
    card = {"dataset_name": "Notes", "split": "test", "text_field": "text",
            "data_files": {"test": "test.jsonl", "validation": "validation.jsonl"}}
    for control, message in (({"kind": "split", "source": "validation", "lengths_pvalue": 0.5},
                              "lengths_pvalue is a p-value in [0, 1] of an assumed split"),
                             ({"kind": "split", "source": "validation", "assumed": True, "lengths_pvalue": 2},
                              "lengths_pvalue is a p-value in [0, 1] of an assumed split, got 2"),
                             ({"kind": "split", "source": "validation", "assumed": "yes"},
                              "assumed is true only for a split audit --tasks chose itself, got 'yes'")):
        with pytest.raises(ContamError, match=re.escape("unclear control: " + message)):
            Partition.from_card_fields({**card, "control": control}, tmp_path / "card.yaml")


def _audit(out: Path, model: Path, task_dir: Path, *extra: str) -> int:
    return cli_main(["audit", "--model", str(model), "--label", "tiny", "--include_path", str(task_dir),
                     "--methods", "likelihood", "--sample", "8", "--batch_size", "16", "--no-report", "--output_path",
                     str(out),
                     *extra])


def _likelihood(out: Path) -> tuple[dict, dict]:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect, partition_verdicts

    verdicts = collect(load_run(out))
    return ({(v.partition, v.test): v for v in verdicts if v.family == "likelihood"},
            {v.partition: v for v in partition_verdicts(verdicts)})


def test_audit_tasks_takes_the_tasks_validation_split_as_the_control_with_no_flag(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    out = tmp_path / "audit"
    assert _audit(out, tiny_model_dir, task_dir, "--tasks", "notes_two,notes_one,notes_long") == 0
    printed = capsys.readouterr().out.splitlines()
    long_p = split_lengths_test(texts("labnotes_a"), [f"{a} {b}" for a, b in zip(texts("labnotes_b"),
                                                                                 texts("labnotes_b")[1:])]).pvalue
    two_p = split_lengths_test(texts("labnotes_a"), texts("labnotes_b")).pvalue
    assert [line for line in printed if ": control: " in line or ": no second split" in line] == [
        f"notes_two test: control: the task's validation split, assumed exchangeable with test; a model trained on it "
        f"loses power, never level (character lengths: Mann-Whitney U {p_equals(float(two_p))})",
        "notes_one test: no second split: the with-control verdict is not computed",
        f"notes_long test: control: the task's validation split; its whole split differs from test (character "
        f"lengths: Mann-Whitney U {p_equals(float(long_p))} <= 0.05): the control tests check the items they compare "
        "first, and read \"not tested: the splits differ\" if those differ too"]
    likelihood, combined = _likelihood(out)
    # notes_two: the with-control verdict, no flag given, naming the split it used and what it assumes
    control = likelihood[("notes_two test", "likelihood_control")]
    assert 0.0 <= control.pvalue <= 1.0 and control.n == 48  # every item of both splits, not --sample 8
    assert ("control (kind, source)", ASSUMED) in control.evidence.facts()
    assert control.null == ("the scores of notes_two test and of notes_two validation are exchangeable (the model saw "
                            "both alike)")
    assert combined["notes_two test"].test == "partition_combined"
    # notes_one: one split, said so; the lift stands and the verdict is the one without a control
    assert likelihood[("notes_one test", "likelihood_control")].evidence.summary() == "no valid control: not tested"
    assert 0.0 <= likelihood[("notes_one test", "likelihood_lift")].pvalue <= 1.0
    assert combined["notes_one test"].test == "partition_combined_without_control"
    # notes_long: the splits differ in length: the control tests are not tested, the lift stands
    # the check of the 8 + 8 items compared, at its smallest p: none of its 999 relabellings reaches the observed MMD
    why = "the compared items' character 3-grams and lengths: kernel two-sample relabelling p = 0.0010"
    for test in ("likelihood_control", "likelihood_control_zlib", "likelihood_options"):
        untested = likelihood[("notes_long test", test)]
        assert (untested.flagged, untested.pvalue) == (None, None)
        assert untested.evidence.summary() == f"not tested: the splits differ ({why})"
    assert 0.0 <= likelihood[("notes_long test", "likelihood_lift")].pvalue <= 1.0
    assert combined["notes_long test"].test == "partition_combined_without_control"
    audit = json.loads((out / "audit.json").read_text())
    assert audit["identity"]["split_control"] is True
    # The choice is the audit's identity: the same directory with --no-split-control is refused, nothing changed.
    before = (out / "audit.json").read_text()
    assert _audit(out, tiny_model_dir, task_dir, "--tasks", "notes_two,notes_one,notes_long",
                  "--no-split-control") == 2
    assert "split_control True -> False" in capsys.readouterr().err
    assert (out / "audit.json").read_text() == before


def test_no_split_control_turns_it_off_and_an_explicit_control_wins(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    off = tmp_path / "off"
    assert _audit(off, tiny_model_dir, task_dir, "--tasks", "notes_two", "--no-split-control") == 0
    assert not [line for line in capsys.readouterr().out.splitlines() if line.startswith("notes_two test:")]
    likelihood, combined = _likelihood(off)
    assert likelihood[("notes_two test", "likelihood_control")].evidence.summary() == "no valid control: not tested"
    assert combined["notes_two test"].test == "partition_combined_without_control"
    assert json.loads((off / "audit.json").read_text())["identity"]["split_control"] is False
    assert "control" not in yaml.safe_load((off / "partitions" / "task_notes_two_test.yaml").read_text())
    # an explicit --control-split is the user's choice: named as given, never "assumed"
    given = tmp_path / "given"
    assert _audit(given, tiny_model_dir, task_dir, "--tasks", "notes_long", "--control-split", "validation") == 0
    likelihood, _ = _likelihood(given)
    assert ("control (kind, source)", "split validation") in likelihood[
        ("notes_long test", "likelihood_control")].evidence.facts()


def test_no_split_control_without_tasks_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "audit"
    assert cli_main(["audit", "--no-split-control", "--output_path", str(out)]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "field '--no-split-control': goes with --tasks (it turns off the task's own second split as the control); "
        "without --tasks no control is chosen by default, so this flag would be ignored")
    assert not out.exists()


@pytest.mark.parametrize("reference", [False, True])
def test_a_second_split_of_another_kind_is_never_tested_with_or_without_a_reference(
        tiny_model_dir: Path, tiny_model_copy: Path, task_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, reference: bool) -> None:
    """Upper-cased notes have the lengths of the test notes (the whole splits' lengths pass, U p = 1.0), which alone
    let an untrained model be reported contaminated: the check of the items compared (their character 3-grams) reads
    the splits as different, with or without a reference, and no control test is computed."""
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    out = tmp_path / "audit"
    assert _audit(out, tiny_model_dir, task_dir, "--tasks", "notes_shouting",
                  *(["--reference-model", str(tiny_model_copy)] if reference else [])) == 0
    likelihood, combined = _likelihood(out)
    tests = ("likelihood_control", "likelihood_control_zlib", "likelihood_options",
             *(["likelihood_control_reference"] if reference else []))
    summaries = {test: likelihood[("notes_shouting test", test)].evidence.summary() for test in tests}
    assert summaries == dict.fromkeys(tests, "not tested: the splits differ (the compared items' character 3-grams "
                                             "and lengths: kernel two-sample relabelling p = 0.0010)")
    assert all(likelihood[("notes_shouting test", test)].pvalue is None for test in tests)
    assert 0.0 <= likelihood[("notes_shouting test", "likelihood_lift")].pvalue <= 1.0
    assert combined["notes_shouting test"].test == "partition_combined_without_control"
    assert combined["notes_shouting test"].flagged is not True


def test_splits_sharing_every_passage_are_not_tested_and_the_audit_ends(
        tiny_model_dir: Path, task_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A passage benchmark split by question, not by passage: each unit the split-label tests relabel (the items
    sharing a passage) holds items of both splits, so none can be relabelled whole. The audit used to end in a
    traceback inside lm-eval's aggregation, after writing its tasks; now the control tests read "not tested", with
    the units counted, and the other verdicts stand."""
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    out = tmp_path / "audit"
    assert _audit(out, tiny_model_dir, task_dir, "--tasks", "notes_shared") == 0
    likelihood, combined = _likelihood(out)
    why = ("48 items share a passage or option texts with an item of the other split, leaving 0 audited and 0 "
           "control unit(s) to relabel")
    for test in ("likelihood_control", "likelihood_control_zlib"):
        untested = likelihood[("notes_shared test", test)]
        assert (untested.flagged, untested.pvalue) == (None, None)
        assert untested.evidence.summary() == f"not tested: no unit lies in one split alone ({why})"
    assert 0.0 <= likelihood[("notes_shared test", "likelihood_lift")].pvalue <= 1.0
    # the options mode scores DCQ's sample, not every item: there a passage's other questions are mostly unsampled, so
    # its own units include some of one split alone, relabelled as wholes (the shared ones left out)
    options = likelihood[("notes_shared test", "likelihood_options")]
    assert 0.0 <= options.pvalue <= 1.0 and sum(options.sides) < 48
    assert combined["notes_shared test"].test == "partition_combined"  # the options mode compared with the control
    # the report renders it (its NaN p-values read as "not measured")
    assert cli_main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    assert "not tested: no unit lies in one split alone" in (tmp_path / "report" / "report.md").read_text()


def test_too_few_items_to_relabel_are_not_blamed_on_shared_passages() -> None:
    """A run cut to 2 items (``--limit 2``) leaves one unit a side and no relabelling to compare with: its control
    tests read "too few units", not that the splits share their passages (they share none)."""
    from lm_eval_contam.core.split_tests import split_units
    from lm_eval_contam.methods.likelihood.verdicts import (
        CONTROL, NO_UNITS, PER_BYTE, TOO_FEW_UNITS, no_units_verdicts)

    common = {"model": "m", "partition": "notes test", "task": "t", "variant": "control"}
    partition = SimpleNamespace(label="notes test")
    few = split_units([True, False], None)
    assert (few.testable, few.shared_out, few.sides) == (False, False, (1, 1))
    (verdict,) = no_units_verdicts(common, partition, "notes validation", Control.of_split("validation"), few,
                                   [(CONTROL, PER_BYTE)])
    assert verdict.evidence.summary() == (
        f"{TOO_FEW_UNITS} (1 audited and 1 control unit(s) of 2 items; a relabelling needs a unit of each split and "
        "3 items)")
    # one audited item alone (--limit 1): no control item at all, still too few, not shared
    assert no_units_verdicts(common, partition, "notes validation", Control.of_split("validation"),
                             split_units([True], None), [(CONTROL, PER_BYTE)])[0].evidence.result == TOO_FEW_UNITS
    # every audited item in a passage the control shares: the units are the reason
    shared = split_units([True, True, False, False, False], [0, 0, 0, 1, 2])
    assert (shared.shared_out, shared.sides) == (True, (0, 2))
    assert no_units_verdicts(common, partition, "notes validation", Control.of_split("validation"), shared,
                             [(CONTROL, PER_BYTE)])[0].evidence.result == NO_UNITS
