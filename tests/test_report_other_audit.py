"""Issue 51, group 6: ``report`` over an audit folder where the same model's results from another audit sit beside its
own added that audit's partitions to this one's report. Each model's ``audit.json`` entry records the tasks the audit
ran for it; a results file holding another task is refused, one line naming the file, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_contam.cli import main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.report import build_report

MODEL = {"config": {"model": "hf", "model_args": "pretrained=/m"}, "model_name": "/m"}


def _results(folder: Path, date: str, tasks: dict[str, dict], groups: dict | None = None,
             derived: dict | None = None) -> Path:
    """One lm-eval results file of model /m: ``tasks`` name -> its config (each with a score row), ``groups`` (lm-eval's
    group rows, no config), ``derived`` (rows written beside the tasks, no config: a DCR sheet's factor)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = {name: {"alias": name, "acc,none": 0.5, "acc_stderr,none": 0.05} for name in tasks}
    rows.update({name: {"alias": name, "acc,none": 0.5} for name in groups or {}})
    rows.update(derived or {})
    path = folder / f"results_{date}.json"
    path.write_text(json.dumps({"results": rows, "configs": {name: {"task": name, **config} for name, config in
                                                             tasks.items()},
                                "group_subtasks": groups or {},
                                "n-samples": {name: {"original": 40, "effective": 40} for name in tasks}, **MODEL}))
    return path


def _audit(root: Path, tasks: list[str] | None) -> Path:
    """An audit folder whose one model ran ``tasks`` (None: an audit.json of an earlier version, recording none)."""
    entry = {"label": "m", "model": "hf", "model_args": "pretrained=/m", "run_dir": "runs/m"}
    (root / "audit.json").parent.mkdir(parents=True, exist_ok=True)
    (root / "audit.json").write_text(json.dumps({"version": 1, "partitions": [], "settings": {},
                                                 "models": [{**entry, **({"tasks": tasks} if tasks else {})}]}))
    return root / "runs" / "m" / "_m"


def test_the_same_models_results_from_another_audit_are_refused_naming_the_file(tmp_path: Path, capsys) -> None:
    run = _audit(tmp_path / "audit", ["arc_easy"])
    _results(run, "2024-01-01T00-00-00", {"arc_easy": {}})
    other = _results(run, "2024-02-01T00-00-00", {"likelihood_task_other_test": {"metadata": {"method": "likelihood"}},
                                                  "arc_easy": {}})
    with pytest.raises(ContamError) as refused:
        build_report(tmp_path / "audit")
    assert str(refused.value) == (
        f"{other}: field 'tasks': holds task(s) likelihood_task_other_test, which this audit did not run for 'm' (its "
        "audit.json models[0].tasks lists what it ran): the results of another audit or run; move the file to its "
        "own folder")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    assert main(["report", str(tmp_path / "audit")]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"lm-eval-contam report: error: {refused.value}"]
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before  # no report.html, no report.md


def test_its_own_group_rows_derived_rows_and_resumed_files_are_its_own(tmp_path: Path) -> None:
    """Not another audit's: lm-eval's row of a group the audit ran (and its subtasks), a row written beside the tasks
    with no config, a task given as a YAML path (named after the file), and a second file of a resumed run."""
    run = _audit(tmp_path / "audit", ["bench_group", "/nowhere/dcr_task_bench_l1.yaml", "arc_easy"])
    _results(run, "2024-01-01T00-00-00", {"bench_a": {}, "bench_b": {}, "dcr_task_bench_l1": {}},
             groups={"bench_group": ["bench_a", "bench_b"]},
             derived={"dcr_task_bench": {"alias": "dcr_task_bench", "dcr_factor,none": 0.1}})
    _results(run, "2024-01-02T00-00-00", {"arc_easy": {}})
    (model,) = build_report(tmp_path / "audit").models
    assert {"bench_a", "bench_b", "arc_easy", "dcr_task_bench_l1"} <= set(model.results["results"])


def test_an_audit_json_recording_no_tasks_is_not_checked(tmp_path: Path) -> None:
    run = _audit(tmp_path / "audit", None)
    _results(run, "2024-01-01T00-00-00", {"arc_easy": {}})
    _results(run, "2024-02-01T00-00-00", {"arc_challenge": {}})
    (model,) = build_report(tmp_path / "audit").models
    assert {"arc_easy", "arc_challenge"} <= set(model.results["results"])


def test_a_task_whose_yaml_the_audit_wrote_is_its_own_though_not_recorded(tmp_path: Path) -> None:
    """An earlier run of the same audit (other --methods; its record replaced by an earlier version) wrote its task
    YAMLs under the audit folder: its results are this audit's, not another's."""
    run = _audit(tmp_path / "audit", ["arc_easy"])
    _results(run, "2024-01-01T00-00-00", {"arc_easy": {}})
    own = {"metadata": {"config_source": str(tmp_path / "audit" / "tasks" / "t" / "likelihood_task_t_test.yaml")}}
    _results(run, "2024-01-02T00-00-00", {"likelihood_task_t_test": own})
    (model,) = build_report(tmp_path / "audit").models
    assert "likelihood_task_t_test" in model.results["results"]


def test_a_re_run_of_the_same_label_keeps_the_tasks_recorded_before(tmp_path: Path) -> None:
    """audit.json's record of a model's tasks is what the check reads: a second run of the label (e.g. another
    --methods, the same audit) adds its tasks to the first run's, never drops them."""
    from lm_eval_contam.audit.job import AuditSettings, ModelRunRecord, record_run

    settings = AuditSettings(partitions=())
    record_run(tmp_path, ModelRunRecord("m", "hf", "pretrained=/m", "runs/m", tasks=("dcq_x_ll", "arc_easy")), settings)
    record_run(tmp_path, ModelRunRecord("m", "hf", "pretrained=/m", "runs/m", tasks=("pairing_x", "arc_easy")), settings)
    record_run(tmp_path, ModelRunRecord("n", "hf", "pretrained=/n", "runs/n", tasks=("arc_easy",)), settings)
    models = json.loads((tmp_path / "audit.json").read_text())["models"]
    assert [(entry["label"], entry["tasks"]) for entry in models] == [
        ("m", ["dcq_x_ll", "arc_easy", "pairing_x"]), ("n", ["arc_easy"])]
