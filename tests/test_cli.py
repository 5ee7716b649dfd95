"""The CLI: help, task listing, errors, and the two end-to-end CLI runs (lm_eval and lm-eval-contam run)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from lm_eval_contam import task_dir
from lm_eval_contam.cli import main
from lm_eval_contam.cli.tasks import task_rows
from lm_eval_contam.harness import include_paths


def test_every_subcommand_has_help(capsys) -> None:
    from lm_eval_contam.cli import SUBCOMMANDS, build_parser

    parser = build_parser()
    names = list(parser._subparsers._group_actions[0].choices)
    assert len(names) == len(SUBCOMMANDS)
    for name in names:
        try:
            code = main([name, "--help"])  # `run` prints lm-eval's help and returns
        except SystemExit as exit_info:  # argparse's own --help exits
            code = exit_info.code
        assert code == 0, name
        assert "usage:" in capsys.readouterr().out, name


def test_unknown_flag_is_named(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["tasks", "--bogus-flag"])
    assert exit_info.value.code == 2
    assert "--bogus-flag" in capsys.readouterr().err


def test_run_rejects_unknown_lm_eval_flag_by_name(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--model", "hf", "--tasks", "contam_probe", "--not-an-lm-eval-flag", "1"])
    assert exit_info.value.code == 2
    assert "--not-an-lm-eval-flag" in capsys.readouterr().err


def test_include_paths_keeps_user_path_first() -> None:
    ours = str(task_dir())
    assert include_paths(None) == [ours]
    assert include_paths("/my/tasks") == ["/my/tasks", ours]
    assert include_paths(["/a", ours]) == ["/a", ours]


def test_tasks_lists_probe_with_dataset_and_output_type() -> None:
    rows = {row.name: row for row in task_rows()}
    assert rows["contam_probe"].kind == "task"
    assert rows["contam_probe"].output_type == "generate_until"
    assert rows["contam_wiring"].kind == "tag"


def _single_results_file(output_path: Path) -> dict:
    files = list(output_path.rglob("results_*.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


@pytest.mark.slow
@pytest.mark.parametrize("entry", ["lm_eval", "lm-eval-contam run"])
def test_probe_end_to_end_through_cli(entry: str, tiny_model_dir: Path, tmp_path: Path) -> None:
    common = [
        "--model", "hf",
        "--model_args", f"pretrained={tiny_model_dir},dtype=float32",
        "--tasks", "contam_probe",
        "--device", "cpu",
        "--batch_size", "2",
        "--output_path", str(tmp_path / "out"),
    ]
    if entry == "lm_eval":
        command = [sys.executable, "-m", "lm_eval", "run", "--include_path", str(task_dir()), *common]
    else:
        command = [sys.executable, "-m", "lm_eval_contam", "run", *common]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "contains_answer" in done.stdout  # lm-eval's printed table
    results = _single_results_file(tmp_path / "out")
    assert 0.0 <= results["results"]["contam_probe"]["contains_answer,none"] <= 1.0
    assert results["n-samples"]["contam_probe"]["effective"] == 6




def _package_files(repo: Path) -> set[str]:
    """The package's files as the wheel names them (``task_configs/`` installs as ``lm_eval_contam/task_configs/``):
    every file in those folders ships (a README's figure too), bytecode aside."""
    found = set()
    for folder, package in (("lm_eval_contam", "lm_eval_contam"), ("task_configs", "lm_eval_contam/task_configs")):
        found |= {f"{package}/{path.relative_to(repo / folder).as_posix()}" for path in (repo / folder).rglob("*")
                  if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"}
    return found


@pytest.mark.slow
def test_task_dir_survives_non_editable_install(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parent.parent
    wheel_dir, target = tmp_path / "wheel", tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(wheel_dir), str(repo)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = wheel_dir.glob("lm_eval_contam-*.whl")
    # Packages are discovered, none listed by hand: every folder is a package (setuptools ships an unlisted one as
    # data, with this warning), and every module and task config of the tree ships, data-only folders included.
    assert "absent from the `packages` configuration" not in built.stdout + built.stderr
    shipped = set(zipfile.ZipFile(wheel).namelist())
    sources = _package_files(repo)
    assert {"lm_eval_contam/methods/dcr/twins.py", "lm_eval_contam/task_configs/dcr/_template_yaml",
            "lm_eval_contam/task_configs/dcr/dcr_threshold.svg", "lm_eval_contam/nullstudy/fresh/mc_geo_a.jsonl"} <= sources
    assert sources - shipped == set()
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    done = subprocess.run(
        [sys.executable, "-c", "import lm_eval_contam; print(lm_eval_contam.task_dir())"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    installed = Path(done.stdout.strip())
    assert installed.is_relative_to(target)
    assert (installed / "probe" / "contam_probe.yaml").is_file()
    assert (installed / "probe" / "probe.jsonl").is_file()
    # The shipped sample partitions load from the installed package, and their task YAMLs and options ship too.
    count_rows = ("from lm_eval_contam.core.partitions import sample_partitions; "
                  "print(sum(len(partition.rows()) for partition in sample_partitions()))")
    rows = subprocess.run(
        [sys.executable, "-c", count_rows],
        capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert rows.stdout.strip() == "96"  # 4 datasets x 2 splits x 12 rows
    assert (installed / "samples" / "toy_dialogues_options.jsonl").is_file()
    assert (installed / "dcq" / "samples" / "dcq_toy_pairs_test_ll.yaml").is_file()
    assert (installed / "timetravel" / "samples" / "timetravel_toy_reviews_train.yaml").is_file()
