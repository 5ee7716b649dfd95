"""The split study at 96 items (issue 49 item 3): the zlib-normalised split control's rates and the whole audit's
tasks and rates, recomputed from the shipped per-item scores and per-verdict rows (no model)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from lm_eval_contam.nullstudy.corpus import make_mc_dataset, render_mc
from lm_eval_contam.nullstudy.split_audit import audit_rates, task_name, write_tasks
from lm_eval_contam.verdicts.detection_rates import SPLIT_CONTROL_RATES_FILE


def test_the_shipped_zlib_rates_at_96_are_those_of_the_shipped_scores() -> None:
    """``likelihood_control_zlib`` at 96 (every item, one seeded verdict per pair): the same split-label verdict as
    per byte, on log-likelihood per zlib byte of the same shipped scores."""
    from lm_eval_contam.nullstudy.split_control import by_split, scored, size_rates

    shipped = json.loads(SPLIT_CONTROL_RATES_FILE.read_text(encoding="utf-8"))["tests"]["likelihood_control_zlib"]
    clean, injected, filler = scored("clean"), scored("injected"), scored("filler")
    for shape, detected, siblings in (("multiple choice", 3, 2), ("free text", 1, 0)):
        datasets = sorted({str(row["dataset"]) for row in injected if row["shape"] == shape})
        found = size_rates(by_split(injected), by_split(clean), datasets, "zlib", 96, filler=by_split(filler))
        assert found == shipped[shape]["96"]
        assert (found["detection"]["seeded"]["flagged"], found["false_positive_held_out"]["seeded"]["flagged"],
                found["false_positive_clean"]["seeded"]["flagged"],
                found["false_positive_filler"]["seeded"]["flagged"]) == (detected, siblings, 0, 0)


def test_the_filler_only_fine_tune_is_flagged_at_96_once_in_24_pairs_by_the_split_control_tests() -> None:
    """The filler-only fine-tune (the injected recipe without the injection: it saw neither split of any dataset),
    both pairs of each dataset at 96, recomputed from its shipped scores: per byte and per zlib byte 0 of 8 per shape;
    on u (the clean model its reference, the test's only model null) 1 of 8 multiple-choice pairs, 0 of 8 free text."""
    from lm_eval_contam.nullstudy.split_control import by_split, scored, size_rates, with_u

    shipped = json.loads(SPLIT_CONTROL_RATES_FILE.read_text(encoding="utf-8"))["tests"]
    clean, injected, filler = scored("clean"), scored("injected"), scored("filler")
    assert len(filler) == len(injected) == 2304
    flagged = {}
    for test, score in (("likelihood_control", "per_byte"), ("likelihood_control_zlib", "zlib"),
                        ("likelihood_control_reference", "u")):
        for shape in ("multiple choice", "free text"):
            datasets = sorted({str(row["dataset"]) for row in injected if row["shape"] == shape})
            found = size_rates(by_split(with_u(injected, clean)), None, datasets, score, 96,
                               filler=by_split(with_u(filler, clean)))
            assert found["false_positive_filler"] == shipped[test][shape]["96"]["false_positive_filler"]
            flagged[test, shape] = found["false_positive_filler"]["seeded"]["flagged"]
    assert flagged == {("likelihood_control", "multiple choice"): 0, ("likelihood_control", "free text"): 0,
                       ("likelihood_control_zlib", "multiple choice"): 0, ("likelihood_control_zlib", "free text"): 0,
                       ("likelihood_control_reference", "multiple choice"): 1,
                       ("likelihood_control_reference", "free text"): 0}


def test_the_study_tasks_are_the_fine_tunes_items_with_their_second_split(tmp_path: Path) -> None:
    """Each dataset gives two lm-eval tasks: its injected ``train`` split evaluated against ``test`` (detection), and
    ``test`` against ``extra`` (the sibling); each item rendered as the fine-tune saw it, the letters as choices."""
    from lm_eval.tasks import TaskManager

    from lm_eval_contam.nullstudy.study import _vocabulary

    roles = write_tasks(tmp_path, 0, datasets=1, rows=6)
    assert {name: role for name, (role, _) in roles.items()} == {task_name(0, "detection"): "detection",
                                                                task_name(0, "sibling"): "sibling"}
    nouns, adjectives = _vocabulary()
    rows = {split: make_mc_dataset(0, 0, nouns, adjectives, rows_per_split=6, splits=(split,)).splits[split]
            for split in ("train", "test", "extra")}
    manager = TaskManager(include_path=str(tmp_path), include_defaults=False)
    tasks = manager.load_task_or_group([task_name(0, "detection"), task_name(0, "sibling")])
    for name, (evaluated, control) in ((task_name(0, "detection"), ("train", "test")),
                                       (task_name(0, "sibling"), ("test", "extra"))):
        task = tasks[name]
        assert [task.doc_to_text(doc) for doc in task.dataset["test"]] == [render_mc(row) for row in rows[evaluated]]
        assert [task.doc_to_text(doc) for doc in task.dataset["validation"]] == [render_mc(row)
                                                                              for row in rows[control]]
        assert [doc["answer"] for doc in task.dataset["test"]] == [row["answer"] for row in rows[evaluated]]
        assert task.doc_to_choice(task.dataset["test"][0]) == ["A", "B", "C", "D"]


def test_the_free_text_study_tasks_are_the_fine_tunes_texts_answering_their_label(tmp_path: Path) -> None:
    """Free text: each dataset's two ``generate_until`` tasks render each row's text exactly as the split study scored
    it (what the fine-tune saw), with its label's name as the target and the same second splits."""
    from lm_eval.tasks import TaskManager

    from lm_eval_contam.lmeval.benchmark_docs import benchmark_docs
    from lm_eval_contam.nullstudy.corpus import make_dataset
    from lm_eval_contam.nullstudy.split_audit import FREE_TEXT
    from lm_eval_contam.nullstudy.study import _vocabulary

    roles = write_tasks(tmp_path, 0, datasets=1, rows=6, shape=FREE_TEXT)
    names = [task_name(0, "detection", FREE_TEXT), task_name(0, "sibling", FREE_TEXT)]
    assert sorted(roles) == sorted(names) and names[0] == "split_study_free_0_detection"
    nouns, adjectives = _vocabulary()
    made = {split: make_dataset(0, 0, nouns, adjectives, rows_per_split=6, splits=(split,))
            for split in ("train", "test", "extra")}
    tasks = TaskManager(include_path=str(tmp_path), include_defaults=False).load_task_or_group(names)
    for name, (evaluated, control) in zip(names, (("train", "test"), ("test", "extra"))):
        task = tasks[name]
        assert task.OUTPUT_TYPE == "generate_until"
        docs = benchmark_docs(name, task)
        dataset = made[evaluated]
        assert [doc.text for doc in docs] == [row["text"] for row in dataset.splits[evaluated]]
        assert [doc.target for doc in docs] == [dataset.label_names[row["label"]]
                                                for row in dataset.splits[evaluated]]
        assert [task.doc_to_text(doc) for doc in task.dataset["validation"]] == [
            row["text"] for row in made[control].splits[control]]


def test_the_audit_rates_count_each_tests_p_and_its_calls_per_role() -> None:
    """A p <= 0.05 is counted in ``p``; in ``called`` only where the report makes it a call (no reason against it);
    a test not run on a partition (p None) counts in neither."""
    def row(test: str, role: str, p: float | None, no_call: str | None = None, variant: str | None = None) -> dict:
        return {"test": test, "variant": variant, "role": role, "pvalue": p, "flagged": None if p is None else p <= 0.05,
                "no_call": no_call}

    found = audit_rates([row("likelihood_control", "detection", 0.01, variant="control"),
                         row("likelihood_control", "detection", 0.20, variant="control"),
                         row("likelihood_control", "sibling", None, variant="control"),
                         row("option_order", "detection", 0.001, no_call="over its level"),
                         row("option_order", "sibling", 0.5)])
    assert found["likelihood_control:control"] == {"detection": {
        "p": {"flagged": 1, "k": 2, "rate": 0.5, "ci": [0.0126, 0.9874]},
        "called": {"flagged": 1, "k": 2, "rate": 0.5, "ci": [0.0126, 0.9874]}}}
    assert found["option_order"]["detection"]["p"]["flagged"] == 1
    assert found["option_order"]["detection"]["called"]["flagged"] == 0
    assert found["option_order"]["sibling"]["p"] == {"flagged": 0, "k": 1, "rate": 0.0, "ci": [0.0, 0.975]}


def test_the_shipped_audit_rates_at_96_are_those_of_the_shipped_verdict_rows() -> None:
    """``audit_96`` (and ``audit_96_free_text``) recomputed from the shipped per-verdict rows of the default audit of
    the 8 study tasks: on the injected fine-tune the per-partition verdict flags the 4 injected partitions and none of
    the 4 siblings, the split control alone the same; on the clean model and on the filler-only fine-tune nothing of
    the 8 (free text: one of the filler-only fine-tune's 8)."""
    from lm_eval_contam.nullstudy.split_audit import scored_rows

    shipped = json.loads(SPLIT_CONTROL_RATES_FILE.read_text(encoding="utf-8"))["audit_96"]
    found = {model: audit_rates(scored_rows(model)) for model in ("injected", "clean", "injected_with_reference",
                                                                   "filler", "filler_with_reference")}
    assert found == shipped
    # with the base as the reference too: the verdict with a control and a reference flags the same 4 and no sibling;
    # on the filler-only fine-tune (the same training without the injection) none of the 8, with or without it
    combined = "partition_combined_with_control_and_reference"
    assert {model: {role: counts["called"]["flagged"] for role, counts in found.pop(model)[combined].items()}
            for model in ("injected_with_reference", "filler_with_reference")} == {
        "injected_with_reference": {"detection": 4, "sibling": 0}, "filler_with_reference": {"detection": 0, "sibling": 0}}
    called = {model: {test: {role: counts["called"]["flagged"] for role, counts in roles.items()}
                      for test, roles in found[model].items() if test in ("partition_combined",
                                                                          "likelihood_control:control")}
              for model in found}
    assert called == {"injected": {"partition_combined": {"detection": 4, "sibling": 0},
                                   "likelihood_control:control": {"detection": 4, "sibling": 0}},
                      "clean": {"partition_combined": {"detection": 0, "sibling": 0},
                                "likelihood_control:control": {"detection": 0, "sibling": 0}},
                      "filler": {"partition_combined": {"detection": 0, "sibling": 0},
                                 "likelihood_control:control": {"detection": 0, "sibling": 0}}}
    # free text, the same audit of its 4 datasets (generate_until tasks): the split control finds 3 of 4, the
    # verdict over its 4-test Holm set 1 of 4, and with the base as reference (5 tests) the same 1 of 4; nothing on
    # the siblings or the clean model; on the filler-only fine-tune one sibling pair (the options mode's p = 0.0116,
    # Holm over four 0.0464), none with the reference (Holm over five: 0.058)
    from lm_eval_contam.nullstudy.split_audit import FREE_TEXT

    free = {model: audit_rates(scored_rows(model, shape=FREE_TEXT))
            for model in ("injected", "clean", "injected_with_reference", "filler", "filler_with_reference")}
    assert free == json.loads(SPLIT_CONTROL_RATES_FILE.read_text(encoding="utf-8"))["audit_96_free_text"]
    # the Holm sets those rates were measured with, as shipped beside them
    from lm_eval_contam.nullstudy.split_audit import MULTIPLE_CHOICE, holm_sets
    from lm_eval_contam.verdicts.detection_rates import WHOLE_AUDIT_HOLM_SETS_KEY

    assert json.loads(SPLIT_CONTROL_RATES_FILE.read_text(encoding="utf-8"))[WHOLE_AUDIT_HOLM_SETS_KEY] == {
        shape: holm_sets([row for model in models for row in scored_rows(model, shape=shape)])
        for shape, models in ((MULTIPLE_CHOICE, shipped), (FREE_TEXT, free))}
    assert holm_sets(scored_rows("injected"))["partition_combined"] == [
        "dcq_loglikelihood", "likelihood_control:control", "likelihood_control_zlib:control",
        "likelihood_options:options"]
    combined = dict.fromkeys(("injected_with_reference", "filler_with_reference"),
                             "partition_combined_with_control_and_reference")
    injected = {"partition_combined": {"detection": 1, "sibling": 0},
                "likelihood_control:control": {"detection": 3, "sibling": 0},
                "likelihood_options:options": {"detection": 0, "sibling": 0}}
    assert {model: {test: {role: counts["called"]["flagged"] for role, counts in free[model][test].items()}
                    for test in (combined.get(model, "partition_combined"), "likelihood_control:control",
                                 "likelihood_options:options")} for model in free} == {
        "injected": injected,
        # with the base as reference, the same calls (the verdict's fifth test, on u, finds none of the 4)
        "injected_with_reference": {combined["injected_with_reference"] if test == "partition_combined" else test:
                                    counts for test, counts in injected.items()},
        "clean": {"partition_combined": {"detection": 0, "sibling": 0},
                  "likelihood_control:control": {"detection": 0, "sibling": 0},
                  "likelihood_options:options": {"detection": 1, "sibling": 0}},
        "filler": {"partition_combined": {"detection": 0, "sibling": 1},
                   "likelihood_control:control": {"detection": 0, "sibling": 0},
                   "likelihood_options:options": {"detection": 0, "sibling": 1}},
        "filler_with_reference": {"partition_combined_with_control_and_reference": {"detection": 0, "sibling": 0},
                                  "likelihood_control:control": {"detection": 0, "sibling": 0},
                                  "likelihood_options:options": {"detection": 0, "sibling": 1}}}
    # the combined verdict's Holm set: every calibrated test that was tested, each row's Holm p beside its own
    rows = [row for row in scored_rows("injected") if row["task"] == task_name(2, "detection")]
    combined = next(row for row in rows if row["test"] == "partition_combined")
    held = [row for row in rows if row["holm"] is not None]
    assert combined["n"] == len(held) == 4
    assert combined["pvalue"] == min(row["holm"] for row in held)


def test_a_not_flagged_quotes_the_detection_measured_nearest_the_items_it_compared() -> None:
    """A multiple-choice partition verdict with a control that compared 96 items a side quotes the whole audit at 96
    (4 of 4); one that compared 24 quotes the validation study's 24-item partitions (3 of 8); a free-text one at 96
    the whole free-text audit's (1 of 4), at 24 the validation study's."""
    from lm_eval_contam.core.method_verdict import Verdict
    from lm_eval_contam.verdicts.detection_rates import clean_bill
    from lm_eval_contam.verdicts.verdict import partition_verdicts

    def row(items: int, shape: str):
        control = Verdict(model="m", partition="p", family="likelihood", test="likelihood_control", title="t",
                          task="t", flagged=False, statistic=None, pvalue=0.3, confidence_interval=None, n=2 * items,
                          null="", rule="", evidence=None, variant="control", shape=shape)
        (found,) = partition_verdicts([control])
        return found

    assert clean_bill(row(96, "multiple choice")) == (
        "at the papers' injection strength this verdict (with a control) finds 4 of 4 injected multiple choice "
        "partitions audited whole at 96 items a side (the split study)")
    assert clean_bill(row(96, "multiple choice"), short=True) == (
        "finds 4/4 at papers' strength, 96 a side (with a control)")
    assert clean_bill(row(24, "multiple choice")) == (
        "at the papers' injection strength this verdict (with a control) finds 3 of 8 injected multiple choice "
        "partitions of 24 items")
    assert clean_bill(row(60, "multiple choice")).endswith("at 96 items a side (the split study)")  # a tie: the larger
    # 300 audited items against a control of 30: its power is that of 30 a side, so the 24-item rates, not the 96's
    (small_control,) = partition_verdicts([replace(row(165, "multiple choice").evidence[0][0], sides=(300, 30))])
    assert clean_bill(small_control) == clean_bill(row(24, "multiple choice"))
    with_reference = Verdict(model="m", partition="p", family="likelihood", test="likelihood_control_reference",
                             title="t", task="t", flagged=False, statistic=None, pvalue=0.3, confidence_interval=None,
                             n=192, null="", rule="", evidence=None, variant="control", shape="multiple choice")
    (both,) = partition_verdicts([row(96, "multiple choice").evidence[0][0], with_reference])
    assert clean_bill(both) == (
        "at the papers' injection strength this verdict (with a control and a reference model) finds 4 of 4 injected "
        "multiple choice partitions audited whole at 96 items a side (the split study)")
    assert clean_bill(row(96, "free text")) == (
        "at the papers' injection strength this verdict (with a control) finds 1 of 4 injected free text "
        "partitions audited whole at 96 items a side (the split study)")
    free_reference = replace(with_reference, shape="free text")
    (both_free,) = partition_verdicts([row(96, "free text").evidence[0][0], free_reference])
    assert clean_bill(both_free) == (
        "at the papers' injection strength this verdict (with a control and a reference model) finds 1 of 4 injected "
        "free text partitions audited whole at 96 items a side (the split study)")
    assert clean_bill(row(24, "free text")) == (
        "at the papers' injection strength this verdict (with a control) finds 2 of 8 injected free text partitions "
        "of 24 items")


def test_a_verdict_at_96_states_the_null_pairs_its_setting_flagged_in_the_whole_audits() -> None:
    """Beside the false-positive rate measured on 24-item partitions, a partition verdict that compared 96 items a side
    states how often the same verdict flagged the whole audits' null pairs (the injected fine-tune's siblings, both
    pairs of the clean model and of the filler-only fine-tune), counted here from the shipped rows."""
    from lm_eval_contam.core.method_verdict import Verdict
    from lm_eval_contam.nullstudy.split_audit import FREE_TEXT, MULTIPLE_CHOICE, scored_rows
    from lm_eval_contam.report.layout import partition_line
    from lm_eval_contam.verdicts.detection_rates import whole_audit_false_positives
    from lm_eval_contam.verdicts.verdict import partition_verdicts

    def row(items: int, shape: str, test: str = "likelihood_control"):
        control = Verdict(model="m", partition="p", family="likelihood", test=test, title="t", task="t",
                          flagged=False, statistic=None, pvalue=0.3, confidence_interval=None, n=2 * items, null="",
                          rule="", evidence=None, variant="control", shape=shape)
        (found,) = partition_verdicts([control])
        return found

    def flagged_null_pairs(shape: str, audits: dict) -> tuple[int, int]:
        rows = [r for label, roles in audits.items() for r in scored_rows(label, shape=shape)
                if r["test"].startswith("partition_combined") and r["role"] in roles]
        return sum(bool(r["flagged"]) and not r["no_call"] for r in rows), len(rows)

    nulls = {"injected": ("sibling",), "clean": ("detection", "sibling"), "filler": ("detection", "sibling")}
    for shape, expected in ((MULTIPLE_CHOICE, (0, 20)), (FREE_TEXT, (1, 20))):
        assert flagged_null_pairs(shape, nulls) == expected
        found = whole_audit_false_positives(row(96, shape))
        assert (found.flagged, found.k) == expected
        assert whole_audit_false_positives(row(24, shape)) is None  # nearer the validation study's 24-item partitions
    assert partition_line(row(96, FREE_TEXT)).startswith(
        "Holm p = 0.3000; false-positive rate 0.0 % (0/56; 95 % CI 0.0–6.4 %); flagged 1/20 = 5 % (95 % CI 0–25 %) of "
        "null pairs audited whole at 96 items a side (the split study); ")
    # the rates at 96 were measured over a Holm set of 4 tests: a verdict holding other tests says so, one holding
    # the same 4 does not
    assert partition_line(row(96, FREE_TEXT)).endswith(
        "; the split study's verdict held 4 tests (dcq_loglikelihood, likelihood_control:control, "
        "likelihood_control_zlib:control, likelihood_options:options), this one 1")
    same = partition_verdicts([row(96, FREE_TEXT, test).evidence[0][0] for test in (
        "likelihood_control", "likelihood_control_zlib")] + [
        replace(row(96, FREE_TEXT).evidence[0][0], test="likelihood_options", variant="options"),
        replace(row(96, FREE_TEXT).evidence[0][0], test="dcq_loglikelihood", variant=None, n=24)])[0]
    assert len(same.evidence) == 4 and "the split study's verdict held" not in partition_line(same)
    assert "the split study's verdict held" not in partition_line(row(24, FREE_TEXT))  # no 96 quoted
    # with a reference, either shape: the filler-only fine-tune's 8 pairs and the injected fine-tune's 4 siblings
    for shape in (MULTIPLE_CHOICE, FREE_TEXT):
        both = partition_verdicts([row(96, shape).evidence[0][0],
                                   row(96, shape, "likelihood_control_reference").evidence[0][0]])[0]
        found = whole_audit_false_positives(both)
        assert (found.flagged, found.k) == flagged_null_pairs(
            shape, {"injected_with_reference": ("sibling",), "filler_with_reference": ("detection", "sibling")})
        assert (found.flagged, found.k) == (0, 12)
