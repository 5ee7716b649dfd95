"""Issue 41: every number the report reads back is checked by its kind (core/result_numbers.py) where the results
file is read; an impossible one is one error naming the file, the task, the field and the value, and nothing is
written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_contam.cli import main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.report import build_report

TASK = "arc_easy"
DATE = "2024-01-01T00-00-00"


def benchmark_row(**changes: object) -> dict:
    """A benchmark's results row as lm-eval, DCR's hook and the reordered hook leave it."""
    row = {"alias": TASK, "sample_len": 40, "acc,none": 0.6, "acc_stderr,none": 0.05,
           "acc_adj,none": 0.3, "acc_adj_stderr,none": 0.04, "acc_adj_ci_low,none": 0.2, "acc_adj_ci_high,none": 0.4,
           "dcr_factor,none": 0.5, "dcr_factor_ci_low,none": 0.35, "dcr_factor_ci_high,none": 0.65,
           "acc_reordered,none": 0.55, "acc_reordered_ci_low,none": 0.5, "acc_reordered_ci_high,none": 0.6,
           "acc_reordered_gap,none": 0.05, "acc_reordered_gap_ci_low,none": 0.0, "acc_reordered_gap_ci_high,none": 0.1,
           "acc_reordered_p,none": 0.04}
    row.update(changes)
    return {key: value for key, value in row.items() if value is not None}


def write_run(root: Path, row: object, counts: dict | None = None, method: str | None = None,
              tasks: dict | None = None) -> Path:
    """One model's lm-eval output folder under ``root`` holding one results file with ``row`` (its task's method:
    ``method``; ``tasks``: more configs, name -> method, with no row); the file's path."""
    folder = root / "model"
    folder.mkdir(parents=True)
    path = folder / f"results_{DATE}.json"
    configs = {name: {"task": name, **({"metadata": {"method": found}} if found else {})}
               for name, found in {TASK: method, **(tasks or {})}.items()}
    path.write_text(json.dumps({
        "results": {TASK: row}, "configs": configs,
        "n-samples": {TASK: counts or {"original": 40, "effective": 40}},
        "config": {"model": "hf", "model_args": "pretrained=/m"}, "model_name": "/m"}))
    return path


def refused(tmp_path: Path, row: object, counts: dict | None = None, **config: object) -> str:
    path = write_run(tmp_path / "run", row, counts, **config)
    with pytest.raises(ContamError) as error:
        build_report(tmp_path / "run")
    message = str(error.value)
    assert message.startswith(f"{path}: field ")
    return message.removeprefix(f"{path}: ")


def test_a_well_formed_results_file_reads_back(tmp_path: Path) -> None:
    write_run(tmp_path / "run", benchmark_row())
    (model,) = build_report(tmp_path / "run").models
    assert model.row(TASK)["acc_reordered_p,none"] == 0.04


@pytest.mark.parametrize(("key", "value"), [("acc_reordered_p,none", -0.2), ("acc_reordered_p,none", 1.5)])
def test_a_p_value_named_underscore_p_out_of_0_1(tmp_path: Path, key: str, value: float) -> None:
    assert refused(tmp_path, benchmark_row(**{key: value})) == (
        f"field {key!r}: task {TASK}: {value!r} is not a p-value (expected a number in [0, 1])")


def test_a_p_value_named_p_out_of_0_1(tmp_path: Path) -> None:
    assert refused(tmp_path, benchmark_row(**{"p,none": 2.0})) == (
        f"field 'p,none': task {TASK}: 2.0 is not a p-value (expected a number in [0, 1])")


@pytest.mark.parametrize(("key", "value", "kind", "bounds"), [
    ("acc,none", 1.5, "score", "[0, 1]"),
    ("acc_reordered,none", 1.5, "score", "[0, 1]"),
    ("acc_adj,none", -0.4, "score", "[0, 1]"),
    ("acc_adj_ci_high,none", 1.2, "score", "[0, 1]"),
    ("dcr_factor,none", 1.7, "DCR factor", "[0, 1]"),
    ("acc_reordered_gap,none", -1.5, "gap", "[-1, 1]"),
])
def test_a_bounded_score_out_of_its_range(tmp_path: Path, key: str, value: float, kind: str, bounds: str) -> None:
    assert refused(tmp_path, benchmark_row(**{key: value})) == (
        f"field {key!r}: task {TASK}: {value!r} is not a {kind} (expected a number in {bounds})")


def test_a_metric_of_unknown_range_is_left_alone(tmp_path: Path) -> None:
    """squadv2's f1 is in percent, a perplexity has no upper end: neither is refused."""
    write_run(tmp_path / "run", benchmark_row(**{"f1,none": 75.5, "word_perplexity,none": 1234.0}))
    (model,) = build_report(tmp_path / "run").models
    assert (model.number(TASK, "f1"), model.number(TASK, "word_perplexity")) == (75.5, 1234.0)


def test_an_adjusted_score_outside_its_own_interval(tmp_path: Path) -> None:
    assert refused(tmp_path, benchmark_row(**{"acc_adj,none": 0.45})) == (
        f"field 'acc_adj,none': task {TASK}: acc_adj 0.45 lies outside its own interval [0.2, 0.4]")


def test_an_interval_whose_ends_are_out_of_order(tmp_path: Path) -> None:
    row = benchmark_row(**{"dcr_factor_ci_low,none": 0.65, "dcr_factor_ci_high,none": 0.35})
    assert refused(tmp_path, row) == (f"field 'dcr_factor_ci_low,none': task {TASK}: the interval of dcr_factor runs "
                                      f"from 0.65 down to 0.35 (dcr_factor_ci_high,none)")


@pytest.mark.parametrize("count", [-1, 2.5, float("inf")])
def test_a_sample_len_that_is_no_count(tmp_path: Path, count: float) -> None:
    assert refused(tmp_path, benchmark_row(sample_len=count)) == (
        f"field 'sample_len': task {TASK}: {count!r} is not a count (expected a non-negative whole number)")


def test_an_n_samples_count_that_is_no_count(tmp_path: Path) -> None:
    assert refused(tmp_path, benchmark_row(), {"original": 40, "effective": -3}) == (
        f"field 'n-samples.effective': task {TASK}: -3 is not a count (expected a non-negative whole number)")


def test_an_emptied_results_object_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = write_run(tmp_path / "run", benchmark_row())
    results = json.loads(path.read_text())
    results["results"] = {}
    path.write_text(json.dumps(results))
    with pytest.raises(ContamError) as error:
        build_report(tmp_path / "run")
    assert str(error.value) == f"{path}: field 'results': not an lm-eval results file: its 'results' object is empty"


def test_the_cli_prints_one_line_exits_2_and_writes_nothing(tmp_path: Path, capsys) -> None:
    path = write_run(tmp_path / "run", benchmark_row(**{"acc_reordered_p,none": -0.2}))
    assert main(["report", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"lm-eval-contam report: error: {path}: field 'acc_reordered_p,none': task {TASK}: -0.2 is not a p-value "
        f"(expected a number in [0, 1])"]
    assert sorted(p.name for p in (tmp_path / "run").rglob("*")) == ["model", path.name]


@pytest.mark.parametrize(("key", "value", "expected"), [
    # Issue 51, group 6: each was rendered (or dropped a row) instead of refused.
    ("acc,none", "0.5", "'0.5' is not a score (expected a number in [0, 1])"),
    ("acc_reordered_gap_vs_reference_items,none", -3, "-3 is not a count (expected a non-negative whole number)"),
    ("acc_reordered_items,none", 2.5, "2.5 is not a count (expected a non-negative whole number)"),
    ("truncated_docs,none", -5, "-5 is not a count (expected a non-negative whole number)"),
    ("s2,none", 1.5, "1.5 is not a DCR level score (expected a number in [0, 1])"),
    ("acc_reordered_gap,none", float("nan"), "nan is not a gap (expected a number in [-1, 1])"),
    ("acc_reordered_gap_vs_reference,none", float("inf"), "inf is not a gap (expected a number in [-2, 2])"),
    ("acc_adj,none", [0.3], "[0.3] is not a score (expected a number in [0, 1])"),
    ("acc_reordered_p,none", "0.04", "'0.04' is not a p-value (expected a number in [0, 1])"),
    ("dcq_kappa,none", 1.5, "1.5 is not a kappa (expected a number in [-1, 1])"),
    ("dcq_top_letter_share,none", 1.2, "1.2 is not a share (expected a number in [0, 1])"),
])
def test_every_kind_the_report_renders_refuses_a_value_out_of_kind(tmp_path: Path, key: str, value: object,
                                                                  expected: str) -> None:
    assert refused(tmp_path, benchmark_row(**{key: value})) == f"field {key!r}: task {TASK}: {expected}"


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), "-3.9"])
def test_a_likelihood_mean_that_is_no_finite_number_is_refused(tmp_path: Path, value: object) -> None:
    """Issue 51, group 6: "inf vs -3.996" was printed as the likelihood test's evidence."""
    row = {"alias": TASK, "original,none": value, "control,none": -3.996, "pvalue,none": 0.5}
    assert refused(tmp_path, row, method="likelihood") == (
        f"field 'original,none': task {TASK}: {value!r} is not a log-likelihood statistic (expected a finite number)")


def test_dcrs_rate_of_no_items_of_the_same_name_stays_not_measured(tmp_path: Path) -> None:
    """DCR's level rows name a pass rate ``original``, NaN at a level with no item: not a likelihood mean."""
    from lm_eval_contam.core.rundir import read_results

    path = write_run(tmp_path / "run", {"alias": TASK, "original,none": float("nan"), "s1,none": float("nan")},
                     method="dcr")
    row = read_results(path)["results"][TASK]
    assert row["s1,none"] != row["s1,none"] and row["original,none"] != row["original,none"]  # NaN, read as it is


def test_a_row_deleted_from_a_results_file_is_an_error_not_a_smaller_holm_set(tmp_path: Path) -> None:
    assert refused(tmp_path, benchmark_row(), tasks={"dcq_task_quiz_test": "dcq"}) == (
        "field 'results': task dcq_task_quiz_test: its row is missing from 'results' (the run's configs hold the "
        "task, method dcq)")


def test_a_task_row_that_is_a_list_is_one_error_not_a_traceback(tmp_path: Path) -> None:
    assert refused(tmp_path, [0.5, 0.6]) == (
        f"field 'results.{TASK}': task {TASK}: its row is list [0.5, 0.6]; expected an object of metrics")
