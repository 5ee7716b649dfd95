"""An audit directory belongs to one audit: what it audits is recorded in ``audit.json`` and a different run refused.

The identity is what decides the verdicts' meaning: the partitions and tasks audited, one's own data and the controls,
the DCR sheet, the quiz modes, the likelihood modes and ``--limit``. It holds the names as the user gave them, never
a path under the audit directory, so a copied directory re-runs with the same command. Each model label is bound to
one model: another model under a used label would replace the first one's results (and answer from its request cache)
without a word.

The identity and the label's model are written before any other file of the audit (:func:`claimed`): a first run
interrupted half-way leaves them beside its leftovers, so the same command resumes there and another audit is refused,
never mixed with them. A command that ends having written nothing else takes them back, and a command refused before
the model answered anything (a :class:`ContamError` before lm-eval's cache or results exist) takes back the files it
wrote too (cards, task YAMLs, quiz options): a refused command leaves the directory as it was. An interrupted run and a
refusal after the model's first answers keep everything, for the same command to resume.

``audit.json`` also holds the audit's id (:data:`AUDIT_ID_KEY`): a random id minted when the identity is first claimed
and kept by every later run into the folder, written into the metadata of every task YAML the audit writes, so the
report can tell this audit's results from those of another audit of the same tasks (``rundir``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from lm_eval_contam.core.errors import ContamError

AUDIT_FILE = "audit.json"
IDENTITY_KEY = "identity"
# A random id, not a hash of the identity: it stays when the same audit is resumed or re-run into its own folder (and
# goes with the folder when it is copied), and differs for every other audit. A hash would give two audits with the
# same flags one id, though the identity holds names as given (`--data notes.jsonl` run in two places: two files).
# Lost with audit.json: the results left from before are then another audit's.
AUDIT_ID_KEY = "audit_id"
LABELS_KEY = "labels"  # label -> "<backend>:<model_args>", bound before the model's run writes anything
# Where a card partition's quiz options are cached (a generator's answers: an API model's may have cost money).
QUIZ_OPTIONS_DIR = "dcq_options"
# What models' answers are written to (lm-eval's request cache, each label's results, the quiz options): never taken
# back.
MODEL_OUTPUT_DIRS = ("cache", "runs", QUIZ_OPTIONS_DIR)


def read_audit(out_dir: Path) -> dict[str, Any] | None:
    """``audit.json`` of ``out_dir``, or None when there is none yet."""
    path = out_dir / AUDIT_FILE
    if not path.is_file():
        return None
    try:
        audit = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ContamError(f"cannot read it ({type(error).__name__}); expected the JSON an audit writes",
                          source=str(path)) from None
    if not isinstance(audit, dict):
        raise ContamError("expected a JSON object", source=str(path))
    return audit


def recorded_audit_id(out_dir: Path) -> str | None:
    """The id ``audit.json`` of ``out_dir`` records (:data:`AUDIT_ID_KEY`); None without one (an earlier version's)."""
    found = (read_audit(out_dir) or {}).get(AUDIT_ID_KEY)
    return found if isinstance(found, str) and found else None


def _differences(recorded: Mapping[str, Any], wanted: Mapping[str, Any]) -> list[str]:
    keys = sorted(set(recorded) | set(wanted))
    return [f"{key} {recorded.get(key)!r} -> {wanted.get(key)!r}" for key in keys if recorded.get(key) != wanted.get(key)]


def check_same_audit(out_dir: Path, identity: Mapping[str, Any], label: str, backend: str, model_args: str,
                     optional: Collection[str] = ()) -> None:
    """Refuse a run that would mix another audit, or another model under a used label, into ``out_dir``;
    ``optional``: the identity's keys recorded only when their flag is given (any other key this version always
    records, so a recorded identity without it was written by an earlier version)."""
    audit = read_audit(out_dir)
    if audit is None:
        return
    recorded = audit.get(IDENTITY_KEY)
    if recorded is not None:
        wanted = json.loads(json.dumps(identity))
        changed = _differences(recorded, wanted)
        unknown = [key for key in wanted if key not in recorded and key not in optional and wanted[key] is not None]
        if changed and len(unknown) == len(changed):  # only what this version adds: its own command would not help
            raise ContamError(f"holds an audit of an earlier version of lm-eval-contam (its {AUDIT_FILE} records no "
                              f"{', '.join(map(repr, unknown))}), which this version cannot resume; give a new "
                              "--output_path", source=str(out_dir), field="--output_path")
        if changed:
            raise ContamError(f"holds another audit ({'; '.join(changed)}); re-run its own command to resume it, or "
                              f"give a new --output_path", source=str(out_dir), field="--output_path")
    bound = {**{entry.get("label"): f"{entry.get('model')}:{entry.get('model_args')}"
                for entry in audit.get("models") or [] if isinstance(entry, dict)},
             **(audit.get(LABELS_KEY) or {})}
    if label in bound and bound[label] != f"{backend}:{model_args}":
        raise ContamError(f"label {label!r} is model {bound[label]} in this audit, not {backend}:{model_args}; give "
                          f"another --label", source=str(out_dir), field="--label")


def request_cache_name(label: str, backend: str, model_args: str) -> str:
    """The name of the label's lm-eval request cache under ``<audit>/cache``: the label and the model's fingerprint.

    lm-eval keys its cache by request only, so a cache named by the label alone answers another model's requests
    with the first one's answers once ``audit.json`` (which binds a label to its model) is lost or edited, or the
    folder's weights were trained further in place. Another model under the label gets a cache of its own instead.
    """
    return f"{label}-{model_fingerprint(backend, model_args)}"


def model_fingerprint(backend: str, model_args: str) -> str:
    """A short hash of the backend, ``model_args`` and the bytes of every file of each local folder or file the
    arguments name (``pretrained=<dir>``, ``peft=<dir>``, ``gguf_file=<file>``...): the weights, tokenizer and
    config the model answers with. A Hub id is taken by its name (and revision, when the arguments pin one)."""
    digest = hashlib.sha256(f"{backend}:{model_args}".encode())
    for pair in model_args.split(","):
        value = pair.partition("=")[2].strip()
        if value and Path(value).exists():
            for name, size, content in _local_files(Path(value)):
                digest.update(f"{name}:{size}:{content}".encode())
    return digest.hexdigest()[:16]


# model_args naming what a model answers with: its weights (a folder, a Hub id or a file) and an adapter on them.
WEIGHT_ARGUMENTS = ("pretrained", "model", "peft", "delta", "gguf_file")


def weights_identity(arguments: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """What a model answers with, by content: per argument naming its weights (:data:`WEIGHT_ARGUMENTS`), every file
    of a local folder (or the file) by name, size and sha256, or a Hub id by its name and ``revision``. Two specs
    with equal identities are the same model, whatever their folders are called."""
    found = []
    for key in WEIGHT_ARGUMENTS:
        value = str(arguments.get(key) or "").strip()
        if not value:
            continue
        path = Path(value).expanduser()
        found.append((key, tuple(_local_files(path)) if path.exists() else (value, arguments.get("revision"))))
    return tuple(found)


# The files that hold a model's weight tensors (the rest of its folder: a card, a config, a tokenizer).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")


def weight_tensors_identity(arguments: Mapping[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """What :func:`weights_identity` reads, by the weight files' sha256 alone (their names, and every other file,
    left out): a copy of a folder with a card added, or its weights renamed, has the same. Empty when an argument
    names no local folder holding weight files (a Hub id)."""
    found = []
    for key in WEIGHT_ARGUMENTS:
        value = str(arguments.get(key) or "").strip()
        path = Path(value).expanduser()
        if not value or not path.exists():
            continue
        digests = tuple(sorted(digest for name, _, digest in _local_files(path) if name.endswith(WEIGHT_SUFFIXES)))
        if not digests:
            return ()
        found.append((key, digests))
    return tuple(found)


def _local_files(path: Path) -> list[tuple[str, int, str]]:
    """Each file of a folder (or the file itself): its name, size and sha256."""
    files = sorted(found for found in path.iterdir() if found.is_file()) if path.is_dir() else [path]
    found = []
    for file in files:
        stat = file.stat()
        found.append((file.name, stat.st_size, _file_digest(str(file.resolve()), stat.st_size, stat.st_mtime_ns)))
    return found


@lru_cache(maxsize=None)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of a file's bytes; the size and mtime in the key re-read a file that changed (once per process else)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _other_files(out_dir: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``out_dir`` but ``audit.json``, with its size and modification time."""
    return {str(path.relative_to(out_dir)): (path.stat().st_size, path.stat().st_mtime_ns)
            for path in sorted(out_dir.rglob("*")) if path.is_file() and path != out_dir / AUDIT_FILE}


@contextmanager
def claimed(out_dir: Path, identity: Mapping[str, Any], label: str, backend: str, model_args: str) -> Iterator[None]:
    """Record the audit's identity, its id (minted on the first run) and the label's model in ``audit.json`` before
    the audit writes anything else.

    Call :func:`check_same_audit` first. When the block ends in an error or an interruption having written no other
    file, or in a refusal (:class:`ContamError`) having only added files before any model output, those files go and
    ``audit.json`` is put back as it was (removed, with the directory, when this call made them).
    """
    path = out_dir / AUDIT_FILE
    existed, before = out_dir.exists(), (path.read_bytes() if path.is_file() else None)
    others = _other_files(out_dir) if existed else {}
    audit = read_audit(out_dir) or {"version": 1, "models": []}
    audit[IDENTITY_KEY] = json.loads(json.dumps(identity))
    audit.setdefault(AUDIT_ID_KEY, uuid.uuid4().hex)  # minted once, kept by every later run (resumed or re-run)
    audit[LABELS_KEY] = {**(audit.get(LABELS_KEY) or {}), label: f"{backend}:{model_args}"}
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(audit, indent=2, default=str) + "\n", encoding="utf-8")
    try:
        yield
    except BaseException as error:
        now = _other_files(out_dir)
        added = sorted(set(now) - set(others))
        unchanged = all(now.get(name) == stamp for name, stamp in others.items())
        before_answers = not any(Path(name).parts[0] in MODEL_OUTPUT_DIRS for name in added)
        refused_before_answers = isinstance(error, ContamError) and before_answers
        if unchanged and (not added or refused_before_answers):
            _take_back(out_dir, added, existed, before)
        elif refused_before_answers and before is not None:
            path.write_bytes(before)  # files of the same audit were rewritten: keep them, but bind no label that never ran
        raise


def _take_back(out_dir: Path, added: Sequence[str], existed: bool, before: bytes | None) -> None:
    """Remove the files a refused command added (and the folders left empty), and put ``audit.json`` back."""
    if not existed:
        shutil.rmtree(out_dir)
        return
    for name in added:
        (out_dir / name).unlink()
    for folder in sorted({parent for name in added for parent in (out_dir / name).parents
                          if parent != out_dir and out_dir in parent.parents}, key=lambda found: -len(found.parts)):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    path = out_dir / AUDIT_FILE
    if before is None:
        path.unlink()
    else:
        path.write_bytes(before)


def relative_to_audit(path: str, out_dir: Path) -> str:
    """A path under the audit directory as a path relative to it (the directory stays relocatable); others as given."""
    try:
        return str(Path(path).resolve().relative_to(out_dir.resolve()))
    except ValueError:
        return path
