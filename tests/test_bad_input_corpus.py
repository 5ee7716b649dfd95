"""Issue 51: a fixed corpus of bad input to ``audit`` (the reproductions of the issue and their neighbours), each run
with every write under the test's folder forbidden: the output folder and the cache home alike. Each ends in exit 2
and one line naming the flag, file, task or field, so every check runs before the audit's first write (a write
before the check would fail the test instead of the refusal).

Quick by construction (under a minute on 2 cores): the refusals before the tasks load share one lm-eval TaskManager.
"""

from __future__ import annotations

import builtins
import io
import os
import shutil
from pathlib import Path

import pytest
from test_bad_input_tasks import task_dir  # noqa: F401 - the module's task YAMLs, as a fixture

from lm_eval_contam import harness
from lm_eval_contam.cli import main


class WriteUnderTest(AssertionError):
    """A write under the test's folder: the audit wrote before it refused."""


@pytest.fixture
def no_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every file opened for writing and every folder made under ``tmp_path`` (the output folder and the cache home
    live there) raises :class:`WriteUnderTest`."""
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    guarded = str(tmp_path.resolve())

    def under_test(path: object) -> bool:
        return isinstance(path, (str, os.PathLike)) and os.path.abspath(os.fspath(path)).startswith(guarded)

    def guarded_open(original):
        def opened(file, mode="r", *args, **kwargs):
            if under_test(file) and any(flag in mode for flag in "wax+"):
                raise WriteUnderTest(f"opened {file} with mode {mode!r}")
            return original(file, mode, *args, **kwargs)
        return opened

    original_mkdir = os.mkdir

    def mkdir(path, *args, **kwargs):
        if under_test(path):
            raise WriteUnderTest(f"made the folder {path}")
        return original_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open(builtins.open))
    monkeypatch.setattr(io, "open", guarded_open(io.open))
    monkeypatch.setattr(os, "mkdir", mkdir)
    return tmp_path


@pytest.fixture(scope="module")
def shared_task_manager():
    """One TaskManager per include path for the module (lm-eval indexes its own tasks in ~10 s each time)."""
    made: dict[tuple, object] = {}
    original = harness.task_manager

    def task_manager(include_path=None, *, include_defaults=False):
        key = (tuple(include_path or ()), include_defaults)
        if key not in made:
            made[key] = original(include_path, include_defaults=include_defaults)
        return made[key]

    return task_manager


@pytest.fixture(scope="module")
def same_weights(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model's weight files beside a card: the audited model by another name."""
    copy = Path(shutil.copytree(tiny_model_dir, tmp_path_factory.mktemp("same_weights") / "copy"))
    (copy / "README.md").write_text("A copy.\n")
    return copy


# (argv after ``audit --model TINY --label tiny --include_path TASKS --output_path OUT``, the words of the one line)
CORPUS = [
    (["--tasks", "quiz_mc", "--sample", "1"], "field '--sample': got 1; expected a whole number of instances, 2 or"),
    (["--tasks", "quiz_mc", "--sample", "-2"], "field '--sample': got -2;"),
    (["--tasks", "quiz_mc", "--reference-items", "1"], "field 'reference_items': got 1; expected a whole number of "
                                                       "items, 2 or more"),
    (["--partitions", "toy_news:train", "--reference-model", "{copy}", "--reference-items", "5"],
     "field '--reference-items': sets the reference's sample for acc_reordered_gap_vs_reference, and this audit "
     "computes no reordered score (no --tasks benchmark)"),
    (["--tasks", "quiz_mc", "--reorderings", "0", "--reference-model", "{copy}", "--reference-items", "5"],
     "computes no reordered score (--reorderings 0)"),
    (["--tasks", "quiz_mc", "--methods", "likelihood", "--reference-model", "{copy}", "--reference-items", "5"],
     "computes no reordered score (--methods leaves out reordered)"),
    (["--tasks", "quiz_mc", "--reference-model", "AUTO"], "field '--reference-model': got 'AUTO': no such folder; "
                                                          "'auto' (lower case)"),
    (["--tasks", "quiz_mc", "--reference-model", "{same}"], "field '--reference-model': the reference model has the "
                                                            "audited model's weights"),
    (["--tasks", "quiz_mc", "--model", "hf:pretrained={tiny},peft=MISSING"],
     "peft=MISSING: ValueError: Can't find 'adapter_config.json' at 'MISSING'"),
    (["--tasks", "quiz_mc", "--model", "{tiny}/nope"], "no such folder '{tiny}/nope'"),
    (["--tasks", "quiz_mc", "--data", "{tmp}/mine.jsonl"], "field '--tasks': give --tasks or --data, not both"),
    (["--tasks", "quiz_outer,quiz_group"], "quiz_group: field '--tasks': its subtasks (quiz_mc, quiz_gen) are already "
                                           "subtasks of group 'quiz_outer'"),
    (["--tasks", "quiz_group,quiz_mc"], "quiz_mc: field '--tasks': is already a subtask of group 'quiz_group'"),
    (["--tasks", "no_such_task"], "no_such_task: field '--tasks': lm-eval does not know this task or group"),
    (["--tasks", "quiz_one_row", "--control-split", "validation"],
     "quiz_one_row: field '--control-split': the control has 1 row"),
    (["--tasks", "quiz_four_listed", "--control-split", "validation"],
     "quiz_four_listed validation: field '--control-split': doc 0: task 'quiz_four_listed' cannot render it "
     "(UndefinedError"),
    (["--tasks", "quiz_mc", "--control-split", "test"], "the control split must differ from the evaluated split"),
    (["--tasks", "quiz_mc", "--control-split", "later"], "field '--control-split': the task's dataset has no split "
                                                         "'later'"),
    (["--tasks", "quiz_mc", "--control-data", "{tmp}/missing.jsonl"],
     "{tmp}/missing.jsonl: field '--control-data': expected an existing .jsonl file of the task's docs"),
]


@pytest.mark.parametrize(("argv", "expected"), CORPUS, ids=[" ".join(argv)[:60] for argv, _ in CORPUS])
def test_each_bad_input_is_one_line_before_any_write(
        tiny_model_dir: Path, task_dir: Path, same_weights: Path, tiny_model_copy: Path,  # noqa: F811
        shared_task_manager, no_writes: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
        argv: list[str], expected: str) -> None:
    monkeypatch.setattr(harness, "task_manager", shared_task_manager)
    names = {"tiny": str(tiny_model_dir), "copy": str(tiny_model_copy), "same": str(same_weights),
             "tmp": str(no_writes)}
    argv = [part.format(**names) for part in argv]
    out = no_writes / "audit"
    assert main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path", str(task_dir),
                 "--output_path", str(out), *argv]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("lm-eval-contam ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert expected.format(**names) in lines[0]
    assert not out.exists() and not (no_writes / "home").exists()
