"""Issue 51, group 6: ``report`` over an audit folder where the same model's results from another audit sit beside its
own added that audit's partitions to this one's report. Each model's ``audit.json`` entry records the tasks the audit
ran for it; a results file holding another task is refused, one line naming the file, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from listed_mc_task import ITEMS, write_listed_mc_task

from lm_eval_contam.cli import main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.rundir import load_run
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


# Issue 51, group 6's residual: another audit of the SAME tasks (another --sample, another folder) bears the same task
# names; audit writes its id (audit.json's audit_id) into every task YAML it writes, and lm-eval records it.
OURS, THEIRS = "a" * 32, "b" * 32


def _with_id(root: Path, audit_id: str | None) -> None:
    path = root / "audit.json"
    audit = json.loads(path.read_text())
    path.write_text(json.dumps({**audit, **({"audit_id": audit_id} if audit_id else {})}))


def _stamped(audit_id: str, **metadata: object) -> dict:
    return {"metadata": {"method": "likelihood", "audit_id": audit_id, **metadata}}


def test_the_same_tasks_from_another_audit_are_refused_by_its_id_naming_file_and_field(tmp_path: Path,
                                                                                       capsys) -> None:
    run = _audit(tmp_path / "audit", ["likelihood_task_t_test", "arc_easy"])
    _with_id(tmp_path / "audit", OURS)
    _results(run, "2024-01-01T00-00-00", {"likelihood_task_t_test": _stamped(OURS), "arc_easy": {}})
    other = _results(run, "2024-02-01T00-00-00", {"likelihood_task_t_test": _stamped(THEIRS, sample=6),
                                                  "arc_easy": {}})
    with pytest.raises(ContamError) as refused:
        build_report(tmp_path / "audit")
    assert str(refused.value) == (
        f"{other}: field 'configs.likelihood_task_t_test.metadata.audit_id': holds task(s) likelihood_task_t_test run "
        f'by another audit (audit_id "{THEIRS}", this audit\'s audit.json records "{OURS}"): the results of another '
        "audit of the same model; move the file to its own folder")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    assert main(["report", str(tmp_path / "audit")]) == 2
    assert capsys.readouterr().err.splitlines() == [f"lm-eval-contam report: error: {refused.value}"]
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before  # no report.html, no report.md


def test_an_older_file_of_another_audit_is_refused_too_though_every_task_of_it_is_replaced(tmp_path: Path) -> None:
    run = _audit(tmp_path / "audit", ["likelihood_task_t_test"])
    _with_id(tmp_path / "audit", OURS)
    other = _results(run, "2023-01-01T00-00-00", {"likelihood_task_t_test": _stamped(THEIRS)})
    _results(run, "2024-01-01T00-00-00", {"likelihood_task_t_test": _stamped(OURS)})
    with pytest.raises(ContamError, match=r"holds task\(s\) likelihood_task_t_test run by another audit") as refused:
        build_report(tmp_path / "audit")
    assert refused.value.source == str(other)


def test_a_reference_run_of_another_audit_is_refused_by_its_id(tmp_path: Path) -> None:
    run = _audit(tmp_path / "audit", ["optionorder_task_t_test"])
    audit = json.loads((tmp_path / "audit" / "audit.json").read_text())
    audit["models"][0]["reference"] = {"run_dir": "runs/m.reference", "model": "hf", "model_args": "pretrained=/m"}
    (tmp_path / "audit" / "audit.json").write_text(json.dumps({**audit, "audit_id": OURS}))
    _results(run, "2024-01-01T00-00-00", {"optionorder_task_t_test": _stamped(OURS, method="optionorder")})
    other = _results(tmp_path / "audit" / "runs" / "m.reference" / "_m", "2024-01-01T00-00-00",
                     {"optionorder_task_t_test": _stamped(THEIRS, method="optionorder", all_orders=True)})
    with pytest.raises(ContamError, match=r"run by another audit \(audit_id \"b+\"") as refused:
        build_report(tmp_path / "audit")
    assert (refused.value.source, refused.value.field) == (
        str(other), "configs.optionorder_task_t_test.metadata.audit_id")


def test_its_own_id_with_other_metadata_and_tasks_recording_none_are_its_own(tmp_path: Path) -> None:
    """The id alone is compared: the reference's run adds all_orders to a task's metadata, a resumed run writes a
    second file; a task whose metadata records no id (lm-eval's benchmark, an earlier version's task) is not checked."""
    run = _audit(tmp_path / "audit", ["likelihood_task_t_test", "optionorder_task_t_test", "arc_easy"])
    _with_id(tmp_path / "audit", OURS)
    _results(run, "2024-01-01T00-00-00", {"likelihood_task_t_test": {"metadata": {"method": "likelihood"}},
                                          "arc_easy": {"metadata": {"config_source": "/elsewhere/arc_easy.yaml"}}})
    _results(run, "2024-01-02T00-00-00", {"likelihood_task_t_test": _stamped(OURS),
                                          "optionorder_task_t_test": _stamped(OURS, all_orders=True)})
    (model,) = load_run(tmp_path / "audit").models  # read as this audit's (the check is the reader's)
    assert {"likelihood_task_t_test", "optionorder_task_t_test", "arc_easy"} <= set(model.results["results"])


def test_an_audit_json_recording_no_id_checks_no_id(tmp_path: Path) -> None:
    run = _audit(tmp_path / "audit", ["likelihood_task_t_test"])  # an earlier version's audit.json: no audit_id
    _results(run, "2024-01-01T00-00-00", {"likelihood_task_t_test": _stamped(THEIRS)})
    (model,) = load_run(tmp_path / "audit").models
    assert "likelihood_task_t_test" in model.results["results"]


def test_the_audit_id_is_minted_once_kept_on_resume_and_written_into_every_task_yaml(tmp_path: Path) -> None:
    import yaml

    from lm_eval_contam.audit.own_data import OwnData, write_card, write_task_configs
    from lm_eval_contam.core.audit_identity import claimed, recorded_audit_id
    from lm_eval_contam.core.partitions import Partition

    out = tmp_path / "audit"
    with claimed(out, {"tasks": ["t"]}, "m", "hf", "pretrained=/m"):
        (out / "runs").mkdir()  # a model output: the claim is kept
    minted = recorded_audit_id(out)
    assert isinstance(minted, str) and len(minted) == 32
    with claimed(out, {"tasks": ["t"]}, "m", "hf", "pretrained=/m"):  # the same audit resumed
        pass
    assert recorded_audit_id(out) == minted
    with claimed(tmp_path / "other", {"tasks": ["t"]}, "m", "hf", "pretrained=/m"):  # the same settings elsewhere
        (tmp_path / "other" / "runs").mkdir()
    assert recorded_audit_id(tmp_path / "other") not in (None, minted)
    (tmp_path / "notes.jsonl").write_text("".join(json.dumps({"text": f"note number {i} about the river"}) + "\n"
                                                  for i in range(30)))
    partition = Partition.from_card(write_card(OwnData(str(tmp_path / "notes.jsonl"), "test", "Notes", "text"), out))
    folder = write_task_configs(partition, out, audit_id=minted)

    class Loader(yaml.SafeLoader):  # lm-eval's !function tags, read as plain strings
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    written = {path.name: yaml.load(path.read_text(), Loader=Loader) for path in sorted(folder.glob("*.yaml"))}
    assert written and all(config["metadata"]["audit_id"] == minted for config in written.values())
    assert all(config["metadata"].get("method") for config in written.values())  # the methods' own keys kept



def test_the_id_goes_into_the_metadata_block_wherever_it_sits_and_a_flow_mapping_is_left_alone() -> None:
    from lm_eval_contam.lmeval.task_yaml import with_metadata

    assert with_metadata("task: t\nmetadata:\n  seed: 0\nother: 1\n", "audit_id", "x") == (
        'task: t\nmetadata:\n  seed: 0\n  audit_id: "x"\nother: 1\n')
    assert with_metadata("task: t\n", "audit_id", "x") == 'task: t\nmetadata:\n  audit_id: "x"\n'
    assert with_metadata("task: t\nmetadata: {seed: 0}\n", "audit_id", "x") == "task: t\nmetadata: {seed: 0}\n"


@pytest.mark.slow
def test_an_audit_with_another_sample_copied_in_is_refused_and_the_same_audit_resumes(
        tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end: the same --tasks audited with another --sample into another folder; its results (the same task
    names) copied into the first audit's model folder make ``report`` exit 2 with one line, nothing written; the first
    audit's own command, re-run into its folder, keeps its id and its report reads both runs as its own."""
    import shutil

    from test_task_audit import write_tasks

    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    task_dir = write_tasks(tmp_path / "lm_eval_tasks")

    def audit(out: Path, sample: str) -> int:
        return main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path", str(task_dir),
                     "--tasks", "quiz_mc", "--methods", "likelihood", "--sample", sample, "--batch_size", "16",
                     "--no-report", "--output_path", str(out)])

    first, second = tmp_path / "first", tmp_path / "second"
    assert audit(first, "8") == 0 and audit(second, "6") == 0
    ours, theirs = (json.loads((out / "audit.json").read_text())["audit_id"] for out in (first, second))
    assert ours != theirs
    (own,) = (first / "runs" / "tiny").rglob("results_*.json")
    (other,) = (second / "runs" / "tiny").rglob("results_*.json")
    task = "likelihood_task_quiz_mc_test_lift"
    assert json.loads(own.read_text())["configs"][task]["metadata"]["audit_id"] == ours
    copied = [shutil.copy(path, own.parent / path.name) for path in other.parent.iterdir()]
    capsys.readouterr()
    before = sorted(str(path) for path in first.rglob("*"))
    assert main(["report", str(first)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"lm-eval-contam report: error: {own.parent / other.name}: field 'configs.{task}.metadata.audit_id': holds "
        f'task(s) {task} run by another audit (audit_id "{theirs}", this audit\'s audit.json records "{ours}"): the '
        "results of another audit of the same model; move the file to its own folder"]
    assert sorted(str(path) for path in first.rglob("*")) == before  # no report.html, no report.md
    for path in copied:
        Path(path).unlink()
    assert audit(first, "8") == 0  # the same audit re-run into its folder: its id kept, both runs its own
    assert json.loads((first / "audit.json").read_text())["audit_id"] == ours
    assert len(list((first / "runs" / "tiny").rglob("results_*.json"))) == 2
    assert main(["report", str(first)]) == 0


def test_the_benchmarks_adjustment_tasks_carry_the_audits_id_and_a_run_without_one_none(tmp_path: Path) -> None:
    """The reordered and DCR tasks an audit adds under the cache home record its id (so another audit's results
    holding only them are refused); ``run`` passes none: nothing is stamped, the folders are those it always had."""
    import yaml

    from lm_eval_contam import harness
    from lm_eval_contam.core.rundir import check_audit_id
    from lm_eval_contam.methods.dcr.benchmark_sheets import adjustment_tasks as dcr_tasks
    from lm_eval_contam.methods.reordered.benchmark_tasks import adjustment_tasks as reordered_tasks

    tasks = write_listed_mc_task(tmp_path, [ITEMS[i] for i in (0, 1, 3, 4)], metrics=("acc",))
    manager = harness.task_manager(str(tasks))

    def metadata(path: str) -> dict:
        return yaml.safe_load(Path(path).read_text())["metadata"]

    for build, home in ((reordered_tasks, tmp_path / "reordered"), (dcr_tasks, tmp_path / "dcr")):
        plain = build(["listed_mc"], manager, {"reorderings": 2, "seed": 0}, home=home)
        ours = build(["listed_mc"], manager, {"reorderings": 2, "seed": 0, "audit_id": OURS}, home=home)
        theirs = build(["listed_mc"], manager, {"reorderings": 2, "seed": 0, "audit_id": THEIRS}, home=home)
        assert plain and len(plain) == len(ours) == len(theirs)
        assert all("audit_id" not in metadata(path) for path in plain)
        for paths, audit_id in ((ours, OURS), (theirs, THEIRS)):
            assert all(metadata(path)["audit_id"] == audit_id for path in paths)
            assert not set(paths) & set(plain)  # each audit its own folder: none overwrites another's
        assert not set(ours) & set(theirs)
        again = build(["listed_mc"], manager, {"reorderings": 2, "seed": 0, "audit_id": OURS}, home=home)
        assert again == ours  # the same audit (resumed, its reference model) finds its YAMLs again
        for mine, bare in zip(ours, plain):  # what the tasks compute is unchanged: only the id and the folder differ
            folder, bare_folder = Path(mine).parent, Path(bare).parent
            text = Path(mine).read_text().replace(f'  audit_id: "{OURS}"\n', "").replace(str(folder), str(bare_folder))
            assert text == Path(bare).read_text()
            assert {path.name: path.read_bytes() for path in folder.iterdir() if path.suffix != ".yaml" or
                    path.name == "sheet.yaml"} == {path.name: path.read_bytes() for path in bare_folder.iterdir()
                                                  if path.suffix != ".yaml" or path.name == "sheet.yaml"}
        # Another audit's results holding only these tasks are refused by the id lm-eval records from the YAML.
        configs = {yaml.safe_load(Path(path).read_text())["task"]: {"metadata": metadata(path)} for path in theirs}
        with pytest.raises(ContamError, match="run by another audit"):
            check_audit_id({"configs": configs}, tmp_path / "results.json", OURS)
        check_audit_id({"configs": configs}, tmp_path / "results.json", THEIRS)
