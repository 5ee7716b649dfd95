"""Judge B after the run: the paper's few-shot judge over lm-eval's logged Time Travel samples.

Reads ``samples_<task>_<time>.jsonl`` files, asks the judge model about every
guided completion, and writes ``samples_<task>_<time>.judge_b.json`` beside each
(the run's own files are never touched).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lm_eval_contam.errors import ContamError
from lm_eval_contam.jsonl import read_jsonl_objects
from lm_eval_contam.timetravel.judge import parse_judge_reply, partition_verdict
from lm_eval_contam.timetravel.prompts import render_judge_prompt

JUDGE_MAX_NEW_TOKENS = 10
SUFFIX = ".judge_b.json"

Generate = Callable[[Sequence[str]], list[str]]


def samples_files(path: Path) -> list[Path]:
    """Logged-sample files under ``path`` (a run's output directory or one file)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ContamError("no such file or directory", source=str(path))
    return sorted(p for p in path.rglob("samples_*.jsonl"))


def timetravel_rows(samples_path: Path) -> list[dict[str, Any]]:
    """The Time Travel samples in one file (other tasks' files give an empty list)."""
    return [
        sample
        for sample in read_jsonl_objects(samples_path)
        if "guided_prompt" in sample.get("doc", {}) and "reference" in sample["doc"] and "alg2_contaminated" in sample
    ]


def judge_samples(samples: Sequence[dict[str, Any]], generate: Generate) -> list[dict[str, Any]]:
    """One verdict per sample: reference, guided completion, judge reply, both judges' classes."""
    references = [sample["doc"]["reference"] for sample in samples]
    candidates = [str(sample["filtered_resps"][0]).strip() for sample in samples]
    replies = generate([render_judge_prompt(ref, cand) for ref, cand in zip(references, candidates)])
    return [
        {
            "doc_id": sample["doc_id"],
            "reference": reference,
            "candidate": candidate,
            "judge_reply": reply,
            "judge_b_match": parse_judge_reply(reply),
            "judge_a_match": sample["alg2_contaminated"],
        }
        for sample, reference, candidate, reply in zip(samples, references, candidates, replies)
    ]


def write_verdicts(samples_path: Path, verdicts: list[dict[str, Any]], judge_model: str) -> Path:
    decision = partition_verdict(v["judge_b_match"] for v in verdicts)
    out = samples_path.with_name(samples_path.name.removesuffix(".jsonl") + SUFFIX)
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
