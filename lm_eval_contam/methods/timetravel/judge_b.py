"""Judge B after the run: the paper's few-shot judge over lm-eval's logged Time Travel samples.

Reads ``samples_<task>_<time>.jsonl`` files, asks the judge model about every
guided completion, and writes ``samples_<task>_<time>.judge_b.<judge>.json``
beside each — one file per judge model, numbered rather than overwritten, and
the run's own files are never touched.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.jsonl import read_jsonl_objects
from lm_eval_contam.core.partitions import slug
from lm_eval_contam.core.rundir import derived_path, read_json, samples_files
from lm_eval_contam.lmeval.generation import ModelSpec, generate
from lm_eval_contam.lmeval.lm_eval_compat import logged_responses
from lm_eval_contam.methods.timetravel.judge import algorithm2_verdict, parse_judge_b_match
from lm_eval_contam.methods.timetravel.prompts import render_judge_prompt

JUDGE_MAX_NEW_TOKENS = 10
SUFFIX = ".judge_b"

Generate = Callable[[Sequence[str]], list[str]]


def judge_a_match(sample: dict[str, Any]) -> str:
    """Judge A's class of a logged sample (its per-doc record, see ``timetravel.task``)."""
    return str(sample["alg2_contaminated"]["match"])


def timetravel_rows(samples_path: Path) -> list[dict[str, Any]]:
    """The Time Travel samples in one file (other tasks' files give an empty list)."""
    return [
        sample
        for sample in read_jsonl_objects(samples_path)
        if "guided_prompt" in sample.get("doc", {}) and "reference" in sample["doc"]
        and isinstance(sample.get("alg2_contaminated"), dict)
    ]


def judge_samples(samples: Sequence[dict[str, Any]], ask_judge: Generate) -> list[dict[str, Any]]:
    """One verdict per sample: reference, guided completion, judge reply, both judges' classes."""
    references = [sample["doc"]["reference"] for sample in samples]
    candidates = [str(logged_responses(sample)[0]).strip() for sample in samples]
    replies = ask_judge([render_judge_prompt(ref, cand) for ref, cand in zip(references, candidates)])
    return [
        {
            "doc_id": sample["doc_id"],
            "reference": reference,
            "candidate": candidate,
            "judge_reply": reply,
            "judge_b_match": parse_judge_b_match(reply),
            "judge_a_match": judge_a_match(sample),
        }
        for sample, reference, candidate, reply in zip(samples, references, candidates, replies)
    ]


def write_verdicts(samples_path: Path, verdicts: list[dict[str, Any]], judge_model: str) -> Path:
    decision = algorithm2_verdict(v["judge_b_match"] for v in verdicts)
    out = derived_path(samples_path, f"{SUFFIX}.{slug(judge_model)}")
    summary = {
        "samples_file": samples_path.name,
        "judge_model": judge_model,
        "exact_matches": decision.exact_matches,
        "near_exact_matches": decision.near_exact_matches,
        "alg2_contaminated": decision.contaminated,
        "instances": verdicts,
    }
    out.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def verdict_files(samples_path: Path) -> list[Path]:
    """The Judge B files written beside one samples file, oldest first."""
    stem = samples_path.name.removesuffix(".jsonl")
    return sorted(samples_path.parent.glob(f"{stem}{SUFFIX}*.json"), key=lambda path: (path.stat().st_mtime, path.name))


def read_verdicts(path: Path) -> dict[str, Any]:
    """A Judge B file (see :func:`write_verdicts`)."""
    verdicts = read_json(path)
    if not isinstance(verdicts, dict):
        raise ContamError("expected a JSON object", source=str(path))
    for field in ("alg2_contaminated", "exact_matches", "near_exact_matches", "instances"):
        if field not in verdicts:
            raise ContamError("missing; rerun lm-eval-contam judge", source=str(path), field=field)
    return verdicts


def latest_per_judge(samples_path: Path) -> list[dict[str, Any]]:
    """The newest Judge B verdicts of each judge model for one samples file."""
    by_judge: dict[str, dict[str, Any]] = {}
    for path in verdict_files(samples_path):
        verdicts = read_verdicts(path)
        by_judge[str(verdicts.get("judge_model"))] = verdicts
    return list(by_judge.values())


def judge_output_path(output_path: Path, judge_model: str, *, device: str | None = None,
                      batch_size: int | str = 1, chat_template: bool = True) -> list[Path]:
    """Judge B over every Time Travel samples file under ``output_path``; the verdict files written."""
    work = [(path, rows) for path in samples_files(output_path) if (rows := timetravel_rows(path))]
    if not work:
        raise ContamError("no Time Travel samples found (run with --log_samples)", source=str(output_path))
    model = ModelSpec.parse(judge_model, device=device, batch_size=batch_size).build()

    def run(prompts: Sequence[str]) -> list[str]:
        return generate(model, prompts, max_gen_toks=JUDGE_MAX_NEW_TOKENS, apply_chat_template=chat_template)

    return [write_verdicts(path, judge_samples(rows, run), judge_model) for path, rows in work]
