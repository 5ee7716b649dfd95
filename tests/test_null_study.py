"""The null study's machinery at tiny size: exact intervals, the sibling wiring, retargeted tasks, the rates file."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from scipy.stats import binomtest

from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.nullstudy import QUICK, StudySettings, clopper_pearson, configs, rates_document, tally
from lm_eval_contam.nullstudy.design import PartitionRole, world_roles
from lm_eval_contam.nullstudy.rates import markdown_table
from lm_eval_contam.nullstudy.study import run_study, training_texts, write_task_configs, write_world_data
from lm_eval_contam.verdicts.verdict import (
    NULL_RATES_FILE,
    holm,
    measured_rate,
    parse_rates,
    partition_verdicts,
    rate_key,
    shipped_rates,
)


@pytest.mark.parametrize("successes,trials", [(0, 50), (1, 50), (3, 63), (17, 40), (50, 50), (0, 1)])
def test_clopper_pearson_matches_scipy_exact_interval(successes: int, trials: int) -> None:
    ours = clopper_pearson(successes, trials)
    scipy = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="exact")
    assert ours.low == pytest.approx(scipy.low, abs=1e-12) and ours.high == pytest.approx(scipy.high, abs=1e-12)


def test_holm_adjusts_step_down_in_input_order() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert holm([0.9, 0.3]) == pytest.approx([0.9, 0.6])
    assert holm([0.9, 0.8]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []


def test_design_roles_and_partition_counts() -> None:
    settings = StudySettings(worlds=2, sibling_datasets=2, unseen_datasets=1)
    assert world_roles(settings, 1) == [
        PartitionRole(1, 3, "train", "injected"), PartitionRole(1, 3, "test", "sibling"),
        PartitionRole(1, 4, "train", "injected"), PartitionRole(1, 4, "test", "sibling"),
        PartitionRole(1, 5, "train", "unseen"), PartitionRole(1, 5, "test", "unseen")]
    assert settings.null_partitions == 2 * (2 + 2)
    assert StudySettings().null_partitions >= 50


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    settings = replace(QUICK, unseen_datasets=1)
    return settings, write_world_data(settings, 0, tmp_path_factory.mktemp("study"))


def test_generated_data_is_seeded_and_the_held_out_text_never_reaches_training(world) -> None:
    settings, found = world
    again = write_world_data(settings, 0, found.directory.parent)
    assert again.datasets == found.datasets
    sibling, unseen = found.datasets[0], found.datasets[1]
    assert sibling.display_name != unseen.display_name and sibling.splits["train"] != sibling.splits["test"]
    background, injected = training_texts(found, settings)
    # The model learns the sibling's name and style from its train split, in Time Travel's web format ...
    assert len(injected) == settings.rows_per_split
    assert injected[0].startswith(f"This is an instance from the train split of the {sibling.display_name} dataset.\n"
                                  f"Instance: {sibling.splits['train'][0]['text']}\nLabel: ")
    # ... and never one held-out row, nor the unseen dataset's name.
    corpus = "\n".join(background + injected)
    held_out = [row["text"] for row in sibling.splits["test"]] + [
        row["text"] for split in unseen.splits.values() for row in split]
    assert not [text for text in held_out if text in corpus]
    assert unseen.display_name not in corpus and "split of the" not in "\n".join(background)


def test_every_instance_gets_offline_quiz_options(world) -> None:
    from lm_eval_contam.kit.quiz_options import read_options

    _, found = world
    write_task_configs(found)
    options = read_options(found.options_path)
    assert len(options) == 4 * QUICK.rows_per_split  # two datasets, two splits, every row
    assert all(len(entry.options) == 4 for entry in options.values())


def test_every_instance_a_quiz_samples_has_options_at_another_study_seed(tmp_path: Path) -> None:
    """The options follow the tasks' own seed (the retargeted YAMLs carry the pattern's, 0), not the study's: with
    more rows than a quiz samples (100) and study seed 3, every instance each DCQ task samples has options."""
    from lm_eval_contam.kit.instances import sample_instances
    from lm_eval_contam.kit.quiz_options import read_options
    from lm_eval_contam.methods.dcq.task import DCQSettings

    found = write_world_data(replace(QUICK, seed=3, rows_per_split=130), 0, tmp_path)
    tasks = write_task_configs(found)
    options = read_options(found.options_path)
    quizzes = [configs.load((found.directory / "tasks" / f"{name}.yaml").read_text()) for name in tasks
               if name.startswith("dcq_")]
    assert len(quizzes) == 2 and len(options) == 2 * 100  # one quiz per split, 100 of its 130 rows each
    for quiz in quizzes:
        settings = DCQSettings.from_metadata(quiz["metadata"], quiz["test_split"])
        sampled = sample_instances(settings.partition, settings.partition.rows(), settings.num_instances, settings.seed)
        assert len(sampled) == 100 and all(instance.key in options for instance in sampled)


def test_an_instance_without_valid_options_stops_the_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval_contam.core.errors import ContamError
    from lm_eval_contam.kit import quiz_options as options

    found = write_world_data(QUICK, 0, tmp_path)
    monkeypatch.setattr(options, "offline_proposer", lambda seed: lambda instances, attempt: [None] * len(instances))
    with pytest.raises(ContamError, match="no valid quiz options for 10 sampled instance"):
        write_task_configs(found)
    assert len(options.read_failures(found.options_path)) == 2 * QUICK.rows_per_split  # recorded beside the cache


def test_tasks_are_the_shipped_families_retargeted(world) -> None:
    from lm_eval.tasks import get_task_dict

    from lm_eval_contam import harness

    _, found = world
    assert {(p.family, p.variant) for p in configs.patterns("train")} >= {
        ("timetravel", ""), ("timetravel", "completion"), ("dcq", "ll")}
    assert not [p for p in configs.patterns("test") if p.family == "dcq" and p.variant == ""]  # generate mode left out
    tasks = write_task_configs(found)
    sibling = found.specs[0]
    name = f"timetravel_{sibling.key}_test_completion"
    assert tasks[name] == PartitionRole(0, 0, "test", "sibling")
    written = (found.directory / "tasks" / f"{name}.yaml").read_text()
    assert "dataset_name: " + sibling.display_name in written and "dataset: toy_news" not in written
    quiz = (found.directory / "tasks" / f"dcq_{sibling.key}_train_ll.yaml").read_text()
    assert f"options_path: {found.directory.resolve() / 'options.jsonl'}" in quiz
    task = get_task_dict([name], harness.task_manager(str(found.directory / "tasks")))[name]
    docs = list(task.test_docs())
    assert len(docs) == QUICK.rows_per_split  # fewer rows than the paper's 10-instance default: all of them
    assert docs[0]["guided_prompt"].startswith(f"This is an instance from the test split of the "
                                               f"{sibling.display_name} dataset.")


def test_generation_cap_goes_to_the_world_tasks_of_the_methods_that_ask_for_it(world) -> None:
    from lm_eval_contam import harness

    _, found = world
    tasks = write_task_configs(found)
    capped = harness.generation_capped_tasks(harness.task_manager(str(found.directory / "tasks")), list(tasks), 3)
    assert set(capped) == {name for name in tasks if name.startswith("timetravel_")}
    assert {task.config.generation_kwargs["max_gen_toks"] for task in capped.values()} == {3}


def _verdict(method: str, partition: str, flagged: bool | None, pvalue: float | None = None,
             variant: str | None = None, family: str = "timetravel", task: str | None = None) -> Verdict:
    return Verdict(model="m", partition=partition, family=family, test=method, title=method.upper(),
                   task=task or f"{family}_{partition}_{variant or ''}", flagged=flagged, statistic=None,
                   pvalue=pvalue, confidence_interval=None, n=10, null="no memory", rule="p <= 0.05",
                   evidence=None, variant=variant)


def test_tally_counts_per_role_and_the_rates_file_round_trips() -> None:
    labelled = [(_verdict("tt_alg1", f"p{i}", i < 3, variant="completion"), "sibling") for i in range(10)]
    labelled += [(_verdict("tt_alg1", f"u{i}", i < 1, variant="completion"), "unseen") for i in range(20)]
    labelled += [(_verdict("tt_alg1", f"i{i}", True, variant="completion"), "injected") for i in range(5)]
    labelled += [(_verdict("dcr", "x", None), "unseen")]  # no decision: not counted
    (rates,) = tally(labelled)
    assert rates.key == "tt_alg1:completion"
    assert {role: (r.flagged, r.k) for role, r in rates.by_role.items()} == {
        "sibling": (3, 10), "unseen": (1, 20), "injected": (5, 5)}
    document = rates_document([rates], command="python scripts/null_study.py", date="2026-11-23", design={},
                              wall_seconds=61.04)
    entry = document["methods"]["tt_alg1:completion"]
    assert (entry["k"], entry["false_positives"], entry["rate"]) == (30, 4, 0.1333)
    scipy = binomtest(4, 30).proportion_ci(method="exact")
    assert entry["ci"] == [round(scipy.low, 4), round(scipy.high, 4)]
    assert set(entry["by_null"]) == {"sibling", "unseen"} and entry["date"] == "2026-11-23"
    parsed = parse_rates(json.loads(json.dumps(document)))["tt_alg1:completion"]
    assert parsed.text() == "13.3 % (4/30; 95 % CI 3.8–30.7 %)"
    assert measured_rate(labelled[0][0], {"tt_alg1:completion": parsed}) is parsed
    assert measured_rate(_verdict("tt_alg1", "p", False, variant="instruct"), {"tt_alg1:completion": parsed}) is None
    table = markdown_table([rates], wall_seconds=61.04, command="python scripts/null_study.py")
    assert "| TT_ALG1 | `tt_alg1:completion` | all null partitions | 30 | 4 | 13.3 % | [3.8 %, 30.7 %] |" in table
    assert table.endswith("Wall time 1 min 01 s: `python scripts/null_study.py`\n")


def test_partition_verdict_uses_calibrated_tests_only() -> None:
    found = [
        _verdict("tt_alg1", "P", True, 0.001, variant="instruct", task="tt_i"),  # the paper's: shown, not counted
        _verdict("tt_alg1_permutation", "P", True, 0.004, variant="instruct", task="tt_i"),
        _verdict("tt_alg1_permutation", "P", False, 0.5, variant="completion", task="tt_c"),
        _verdict("tt_styles_combined", "P", True, 0.008, task="tt_i + tt_c"),  # stands in for both styles
        _verdict("dcq_loglikelihood", "P", False, 0.03, family="dcq", task="dcq_ll"),
        _verdict("tt_alg2_judge_a", "P", False, variant="instruct", task="tt_i"),
    ]
    (row,) = partition_verdicts(found, rates={})  # nothing measured: no test drives, each is shown beside
    assert row.evidence == () and row.flagged is None and {v.test for v in row.unmeasured} == {
        "tt_alg1_permutation", "tt_styles_combined", "dcq_loglikelihood"}
    # Every test being measured (a study's candidates) drives.
    candidates = frozenset({"tt_alg1_permutation:instruct", "tt_alg1_permutation:completion", "tt_styles_combined",
                            "dcq_loglikelihood"})
    (row,) = partition_verdicts(found, rates={}, candidates=candidates)
    assert [(v.test, adjusted) for v, adjusted in row.evidence] == [
        ("tt_styles_combined", pytest.approx(0.016)), ("dcq_loglikelihood", pytest.approx(0.03))]
    assert row.flagged and row.pvalue == pytest.approx(0.016) and [v.test for v in row.fired] == [
        "tt_styles_combined", "dcq_loglikelihood"]
    assert [v.test for v in row.papers] == ["tt_alg1", "tt_alg2_judge_a"] and row.over_level == ()
    # No test against a control among them: the verdict without a control, with its own measured rates.
    assert rate_key(row.as_verdict()) == "partition_combined_without_control" and row.as_verdict().flagged
    # With the null study's rates the completion-style sign-flip test (14.3 %, CI 6.4-26.2 %) is over its level: it
    # and the styles' combination stop driving, and the instruct-style test stands alone.
    (row,) = partition_verdicts(found, shipped_rates())
    assert [(v.test, v.variant, adjusted) for v, adjusted in row.evidence] == [
        ("tt_alg1_permutation", "instruct", pytest.approx(0.008)), ("dcq_loglikelihood", None, pytest.approx(0.03))]
    assert [(v.test, v.variant) for v in row.over_level] == [("tt_alg1_permutation", "completion")]
    # The shipped default adds the validation study's clean default model, on whose never-seen partitions the
    # instruct-style test flagged 4/16 (CI 7-52 %): it stops driving too.
    (row,) = partition_verdicts(found)
    assert [(v.test, adjusted) for v, adjusted in row.evidence] == [("dcq_loglikelihood", pytest.approx(0.03))]
    assert [(v.test, v.variant) for v in row.over_level] == [
        ("tt_alg1_permutation", "instruct"), ("tt_alg1_permutation", "completion"), ("tt_styles_combined", None)]


def test_shipped_rates_file_is_a_measured_study() -> None:
    if not NULL_RATES_FILE.is_file():
        pytest.skip("the null study has not been run")
    document = json.loads(NULL_RATES_FILE.read_text())
    rates = parse_rates(document)
    assert {"tt_alg1:instruct", "tt_alg1_permutation:completion", "tt_styles_combined", "dcq_loglikelihood",
            "partition_combined"} <= set(rates)
    for rate in rates.values():
        assert rate.k >= 50 and rate.command.startswith("python scripts/null_study.py")
        assert rate.rate == pytest.approx(rate.false_positives / rate.k, abs=1e-4)
        assert rate.confidence_interval.low <= rate.rate <= rate.confidence_interval.high


def test_quick_study_runs_end_to_end_and_labels_every_verdict(tmp_path: Path) -> None:
    labelled = run_study(QUICK, tmp_path, progress=False)
    roles = {(verdict.partition, role) for verdict, role in labelled}
    name = next(iter(write_world_data(QUICK, 0, tmp_path).datasets.values())).display_name
    assert roles == {(f"{name} train", "injected"), (f"{name} test", "sibling")}
    methods = {rate_key(verdict) for verdict, _ in labelled}
    assert {"tt_alg1:instruct", "tt_alg1:completion", "tt_alg1_permutation:completion", "tt_alg2_judge_a:instruct",
            "tt_styles_combined", "dcq_loglikelihood", "partition_combined"} <= methods
    timing = json.loads((tmp_path / "world0" / "timing.json").read_text())
    assert set(timing) == {"data_options_configs", "training", "evaluation"}
    again = run_study(QUICK, tmp_path, progress=False)  # resumed: nothing re-run, the same verdicts
    assert [(v.test, v.partition, v.pvalue, role) for v, role in again] == [
        (v.test, v.partition, v.pvalue, role) for v, role in labelled]
    assert json.loads((tmp_path / "world0" / "timing.json").read_text()) == timing


@pytest.mark.parametrize("dependence", ["independent", "identical"])
def test_partition_verdict_keeps_its_family_wise_level_under_the_null(dependence: str) -> None:
    """Four calibrated tests with uniform null p-values: the partition is flagged in at most 5 % of partitions."""
    import numpy as np

    rng = np.random.default_rng(0)
    partitions = 4000
    draws = rng.uniform(size=(partitions, 4)) if dependence == "independent" else np.repeat(
        rng.uniform(size=(partitions, 1)), 4, axis=1)
    methods = ("tt_styles_combined", "dcq_loglikelihood", "likelihood_control", "likelihood_lift")
    found = [_verdict(method, f"P{i}", bool(p <= 0.05), float(p), task=method)
             for i, row in enumerate(draws) for method, p in zip(methods, row)]
    rate = sum(bool(row.flagged) for row in partition_verdicts(found, rates={}, candidates=frozenset(methods)))
    rate /= partitions
    # Flagged exactly when 4 x min p <= 0.05 (Holm's first step): 1 - (1 - 0.0125)^4 = 4.9 % for independent tests,
    # 1.25 % for identical ones. Monte-Carlo standard error at 5 % and 4,000 partitions: 0.34 %.
    expected = 1 - (1 - 0.05 / 4) ** 4 if dependence == "independent" else 0.05 / 4
    assert rate == pytest.approx(expected, abs=3 * 0.0034) and rate <= 0.05 + 3 * 0.0034


def test_partition_verdict_lines_read_small_p_values_as_inequalities() -> None:
    from lm_eval_contam.report.layout import evidence_line, over_level_line, partition_line

    found = [_verdict("likelihood_control", "P", True, 1e-6, variant="control", family="likelihood", task="lik"),
             _verdict("tt_alg1_permutation", "P", True, 0.01, variant="completion", task="tt_c")]
    (row,) = partition_verdicts(found)
    (verdict, adjusted), = row.evidence
    assert evidence_line(verdict, adjusted).startswith("LIKELIHOOD_CONTROL (control): p < 0.0001, Holm p < 0.0001; "
                                                       "false-positive rate 7.1 % (4/56")
    assert partition_line(row).startswith("Holm p < 0.0001; false-positive rate 0.0 % (0/56")
    assert over_level_line(row.over_level[0]) == (
        "TT_ALG1_PERMUTATION (completion): p ≤ 0.05, no call: over its level (p = 0.0100); not driving: "
        "false-positive rate 14.3 % (8/56; 95 % CI 6.4–26.2 %) in the null study")


def test_a_test_over_its_level_leaves_another_test_of_the_same_task_driving() -> None:
    """The option-order task gives the rank test and the arrangement test: the second over its level on authored orders
    takes only itself out of the verdict."""
    from lm_eval_contam.verdicts.verdict import clean_model_rates

    rates = clean_model_rates({"command": "c", "date": "d", "methods": {
        "option_order": {"false_positive_clean": {"k": 24, "flagged": 0, "rate": 0.0, "ci": [0.0, 0.1425]}},
        "option_order_arrangement": {"false_positive_clean": {"k": 32, "flagged": 8, "rate": 0.25,
                                                              "ci": [0.1146, 0.434]}}}})
    found = [_verdict("option_order", "P", True, 0.01, family="optionorder", task="oo"),
             _verdict("option_order_arrangement", "P", True, 0.001, family="optionorder", task="oo")]
    (row,) = partition_verdicts(found, rates)
    assert [v.test for v, _ in row.evidence] == ["option_order"] and row.flagged
    assert [v.test for v in row.over_level] == ["option_order_arrangement"]


def test_a_test_over_its_level_on_one_shape_drives_no_verdict_on_that_shape() -> None:
    """The lift held its level pooled (5/48 never-seen partitions) and broke it on authored multiple-choice items
    (3/8): it drives a free-text partition's verdict and not a multiple-choice one's; a verdict whose shape is not
    known is checked against the pooled rate alone."""
    from lm_eval_contam.nullstudy.validation import over_level_here
    from lm_eval_contam.verdicts.verdict import over_level, validation_false_positives

    document = {"date": "2026-11-25", "command": "study", "methods": {"likelihood_lift": {
        "false_positive_clean": {"k": 48, "flagged": 5, "rate": 0.1042, "ci": [0.0347, 0.2266]},
        "by_shape": {"free text": {"false_positive_clean": {"k": 16, "flagged": 0, "rate": 0.0, "ci": [0.0, 0.2059]}},
                     "fresh multiple choice": {"false_positive_clean": {"k": 8, "flagged": 3, "rate": 0.375,
                                                                         "ci": [0.0852, 0.7551]}}}}}}
    rates = validation_false_positives(document, "false_positive_clean")
    assert sorted(rates) == ["likelihood_lift", "likelihood_lift@free text", "likelihood_lift@fresh multiple choice"]
    lift = _verdict("likelihood_lift", "P", True, 0.01, family="likelihood", task="lift")
    assert [over_level(replace(lift, shape=shape), rates) for shape in ("multiple choice", "free text", None)] == [
        True, False, False]

    # The study's own check, pooled and per shape: 3 of 8 multiple-choice partitions flagged, 0 of 8 free-text ones.
    labelled = [(replace(lift, partition=f"mc{i}", flagged=i < 3, shape="multiple choice"), "unseen") for i in range(8)]
    labelled += [(replace(lift, partition=f"ft{i}", flagged=False, shape="free text"), "unseen") for i in range(8)]
    assert over_level_here(labelled) == frozenset({"likelihood_lift@multiple choice"})
