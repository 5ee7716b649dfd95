"""The whole ``audit --tasks`` against plain ``lm_eval --tasks`` on the same benchmark, side by side in one run.

    python scripts/bench_audit_tasks.py [--model PATH] [--batch_size 8] [--sizes 40,1000] [--generation 40]
        [--group 57x8] [--second-split 1000] [--out bench_audit_tasks] [--audit-args "--reorderings 2"] [--audits default,reference]

Benchmarks (written under ``--out``; items from the project's seeded grammar, so no model has seen them and nothing
is downloaded): one MMLU-style multiple-choice task per ``--sizes`` entry (question, four lettered options,
``Answer:``; lm-eval's ``multiple_choice``), one generation task of ``--generation`` items (the same questions
without options, ``generate_until`` up to a newline, exact match), and with ``--group SxN`` a group of MMLU's shape
(``bench_group_SxN``: S multiple-choice subtasks of N items each, their ``acc`` aggregated weighted by size, as
lm-eval's ``mmlu`` aggregates its 57), run and audited as one ``--tasks`` name. For each, in this order and alone on
the machine:

1. ``lm_eval --model hf --tasks <task> --include_path <dir> --batch_size B`` (the benchmark as users run it);
2. ``lm-eval-contam audit --tasks <task> --include_path <dir> --batch_size B --no-chat-template`` with the same
   model (the default audit: every method, the report written), plus ``--audit-args``;
3. with ``reference`` among ``--audits``, the same audit with ``--reference-model`` a copy of the model's weights (a
   reference of the audited model's size costs the same; the model itself is refused as its own reference).

Both are timed as processes (start-up and lm-eval's task indexing included: what a user waits for). From the
audit's logged samples it counts, per method (each task's ``metadata.method``; the benchmark's own task apart), the
requests by type, and the forward passes and tokens the model reads for them as lm-eval's HF backend runs them
(requests sharing a context with one-token continuations, or identical requests, share one pass, counted once, for the
benchmark first; tokens: prompt + continuation as the model's tokenizer splits them, for generation prompt + generated). Prints one markdown table per benchmark and the
headline ratio audit / benchmark (wall time); writes ``bench.json`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

MC_YAML = """task: {task}
dataset_path: json
dataset_kwargs: {{data_files: {data_files}}}
test_split: test{second_split}
output_type: multiple_choice
doc_to_text: "Which word fills the blank? {{{{question}}}}\\nA. {{{{choices[0]}}}}\\nB. {{{{choices[1]}}}}\\nC. {{{{choices[2]}}}}\\nD. {{{{choices[3]}}}}\\nAnswer:"
doc_to_choice: ["A", "B", "C", "D"]
doc_to_target: answer
metric_list: [{{metric: acc, aggregation: mean, higher_is_better: true}}]
metadata: {{version: 1.0}}
"""

GENERATION_YAML = """task: {task}
dataset_path: json
dataset_kwargs: {{data_files: {{test: {data}}}}}
test_split: test
output_type: generate_until
doc_to_text: "Which word fills the blank? {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{choices[answer]}}}}"
generation_kwargs: {{until: ["\\n"], max_gen_toks: 16, do_sample: false}}
metric_list: [{{metric: exact_match, aggregation: mean, higher_is_better: true, ignore_case: true, ignore_punctuation: true}}]
metadata: {{version: 1.0}}
"""


GROUP_YAML = """group: {group}
task: {subtasks}
aggregate_metric_list: [{{metric: acc, aggregation: mean, weight_by_size: true}}]
metadata: {{version: 1.0}}
"""


def write_benchmarks(out: Path, sizes: list[int], generation: int, group: tuple[int, int] | None = None,
                     second_split: int = 0) -> dict[str, tuple[str, int]]:
    """The benchmark tasks' data and YAMLs under ``out/tasks``: task (or group) name -> (output type, items). With
    ``second_split``, each multiple-choice benchmark of ``sizes`` also has a twin with the same test items and a
    ``validation`` split of that many more from the same seeded pool (the audit's default control)."""
    from lm_eval_contam.core.jsonl import write_jsonl
    from lm_eval_contam.core.seeding import stable_hash
    from lm_eval_contam.nullstudy.corpus import make_mc_dataset
    from lm_eval_contam.nullstudy.study import _vocabulary

    nouns, adjectives = _vocabulary()
    tasks_dir = out / "tasks"
    tasks_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    # (task, template, items, the name its items derive from, second split's items)
    plan = [(f"bench_mc_{size}", MC_YAML, size, f"bench_mc_{size}", 0) for size in sizes]
    plan += [(f"bench_mc_{size}_validation_{second_split}", MC_YAML, size, f"bench_mc_{size}", second_split)
             for size in sizes if second_split]
    plan += [(f"bench_gen_{generation}", GENERATION_YAML, generation, f"bench_gen_{generation}", 0)] if generation else []
    subtasks = [f"bench_group_{group[0]}x{group[1]}_{index:02d}" for index in range(group[0])] if group else []
    plan += [(subtask, MC_YAML, group[1], subtask, 0) for subtask in subtasks] if group else []
    for task, template, size, items_of, second in plan:
        # Each benchmark's items depend on its name only: the same task is the same items in every run of the script.
        index = int(stable_hash(items_of), 16) % 10**6
        rows = make_mc_dataset(20261127, index, nouns, adjectives, rows_per_split=size, splits=("test",))
        data = write_jsonl(tasks_dir / f"{task}.jsonl", list(rows.splits["test"]))
        files = {"test": str(data)}
        if second:
            extra = make_mc_dataset(20261127, index, nouns, adjectives, rows_per_split=second, splits=("validation",))
            files["validation"] = str(write_jsonl(tasks_dir / f"{task}.validation.jsonl",
                                                  list(extra.splits["validation"])))
        (tasks_dir / f"{task}.yaml").write_text(template.format(
            task=task, data=json.dumps(str(data)), data_files=json.dumps(files),
            second_split="\nvalidation_split: validation" if second else ""))
        written[task] = ("generate_until" if template is GENERATION_YAML else "multiple_choice", size)
    if group:
        name = f"bench_group_{group[0]}x{group[1]}"
        (tasks_dir / f"{name}.yaml").write_text(GROUP_YAML.format(group=name, subtasks=json.dumps(subtasks)))
        for subtask in subtasks:  # run and audited through their group only
            del written[subtask]
        written[name] = (f"group of {group[0]} multiple_choice subtasks", group[0] * group[1])
    return written


def timed(command: list[str], log: Path) -> float:
    """Wall seconds of one process (its output to ``log``); a failure stops the benchmark with the log's tail."""
    print("$", shlex.join(command), flush=True)
    started = time.perf_counter()
    with log.open("w") as handle:
        done = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, check=False)
    seconds = time.perf_counter() - started
    print(f"  {seconds:.1f} s", flush=True)  # on record even if a later step stops
    if done.returncode != 0:
        sys.exit(f"{command[0]} failed ({done.returncode}); see {log}:\n" + "\n".join(log.read_text().splitlines()[-20:]))
    return seconds


def _parts(arguments: Any) -> list[Any]:
    """A logged request's arguments, as lm-eval writes them (``{"gen_args_0": {"arg_0": …}}`` or lists)."""
    values = arguments.values() if isinstance(arguments, dict) else arguments
    return [list(value.values()) if isinstance(value, dict) else list(value) for value in values]


def _pass(kind: str | None, parts: list[Any], response: Any, tokenizer: Any) -> tuple[tuple[str, ...], int]:
    """A request's forward pass as lm-eval's HF backend runs it: its key (requests with the same key share one pass:
    the same context with one-token continuations, e.g. a question's letters, or the very same request) and the
    tokens it reads (prompt + continuation; for generation, prompt + generated)."""
    texts = [part for part in parts if isinstance(part, str)]
    if kind == "generate_until":
        generated = "".join(str(piece) for piece in (response if isinstance(response, list) else [response]))
        return ("generate", texts[0], generated), len(tokenizer(texts[0] + generated)["input_ids"])
    if kind == "loglikelihood_rolling":
        return ("rolling", texts[0]), len(tokenizer(texts[0])["input_ids"])
    # A request of the text alone (the in-context test scores a prompt with no continuation) reads the text once.
    context, continuation = texts[0], texts[1] if len(texts) > 1 else ""
    continued = len(tokenizer(continuation, add_special_tokens=False)["input_ids"])
    key = ("loglikelihood", context) if continued == 1 else ("loglikelihood", context, continuation)
    return key, len(tokenizer(context)["input_ids"]) + continued


def request_counts(run_dir: Path, tokenizer: Any) -> dict[str, dict[str, int]]:
    """Per method (a task's ``metadata.method``; else ``benchmark``): requests by type, and the forward passes and
    tokens the model reads for them, from the results and samples lm-eval wrote under ``run_dir``. A pass shared by
    several requests counts once, for the first part that makes it: the benchmark's own tasks first."""
    results = json.loads(max(run_dir.rglob("results_*.json")).read_text())
    method = {task: str((config.get("metadata") or {}).get("method") or "benchmark")
              for task, config in results["configs"].items()}
    kinds = {task: config.get("output_type") for task, config in results["configs"].items()}
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seen: set[tuple[str, ...]] = set()
    files = {path.name.removeprefix("samples_").rsplit("_", 1)[0]: path for path in run_dir.rglob("samples_*.jsonl")}
    for task in sorted(files, key=lambda name: method.get(name, "benchmark") != "benchmark"):
        found = counts[method.get(task, "benchmark")]
        for line in files[task].read_text().splitlines():
            sample = json.loads(line)
            for parts, response in zip(_parts(sample["arguments"]), sample.get("resps") or [], strict=False):
                found[f"{kinds.get(task)} requests"] += 1
                key, tokens = _pass(kinds.get(task), parts, response, tokenizer)
                if key not in seen:
                    seen.add(key)
                    found["passes"] += 1
                    found["tokens"] += tokens
    return {name: dict(values) for name, values in counts.items()}


def refuse(message: str) -> None:
    """Bad input: one line, exit 2, nothing written."""
    print(message, file=sys.stderr)
    sys.exit(2)


def main() -> None:
    from transformers import AutoTokenizer

    from lm_eval_contam.models.default_model import default_model_path

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="HF folder (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--sizes", default="40,1000", help="items of each multiple-choice benchmark")
    parser.add_argument("--generation", type=int, default=40, help="items of the generation benchmark (0: none)")
    parser.add_argument("--group", metavar="SxN", help="also a group of S multiple-choice subtasks of N items each "
                                                        "(MMLU's shape: 57xN), audited as one --tasks group")
    parser.add_argument("--second-split", type=int, default=0, metavar="N",
                        help="also each --sizes benchmark with a validation split of N more items (the audit's "
                             "default control), timed beside it")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=Path("bench_audit_tasks"))
    parser.add_argument("--audit-args", default="", help="extra audit arguments, e.g. '--reorderings 2'")
    parser.add_argument("--audits", default="default",
                        help="which audits to time beside each plain run: default (no reference) and/or reference "
                             "(--reference-model a copy of the model)")
    args = parser.parse_args()
    model = str(args.model or default_model_path())
    out = args.out.resolve()
    if out.exists():
        refuse(f"--out {out} exists: give a new folder (nothing is overwritten)")
    sizes = [size.strip() for size in args.sizes.split(",") if size.strip()]
    if not all(size.isdigit() and int(size) > 0 for size in sizes) or args.generation < 0:
        refuse(f"--sizes {args.sizes!r} / --generation {args.generation}: expected positive whole numbers of items")
    shape = (args.group or "").split("x")
    if args.group is not None and not (len(shape) == 2 and all(part.isdigit() and int(part) > 0 for part in shape)):
        refuse(f"--group {args.group!r}: expected SUBTASKSxITEMS, e.g. 57x8")
    group = (int(shape[0]), int(shape[1])) if args.group is not None else None
    if args.second_split < 0:
        refuse(f"--second-split {args.second_split}: expected a whole number of items")
    if not sizes and not args.generation and group is None:
        refuse("nothing to measure: give --sizes, --generation or --group")
    audits = [name.strip() for name in args.audits.split(",") if name.strip()]
    if not audits or not set(audits) <= {"default", "reference"}:
        refuse(f"--audits {args.audits!r}: expected default, reference or both")
    benchmarks = write_benchmarks(out, [int(size) for size in sizes], args.generation, group, args.second_split)
    tokenizer = AutoTokenizer.from_pretrained(model)
    bin_dir = Path(sys.executable).parent
    rows = {}
    for task, (kind, items) in benchmarks.items():
        common = ["--tasks", task, "--include_path", str(out / "tasks"), "--batch_size", str(args.batch_size),
                  "--device", args.device]
        plain = timed([str(bin_dir / "lm_eval"), "--model", "hf", "--model_args", f"pretrained={model},dtype=float32",
                       *common, "--log_samples", "--output_path", str(out / "lm_eval" / task)],
                      out / f"{task}.lm_eval.log")
        benchmark_counts = request_counts(out / "lm_eval" / task, tokenizer)["benchmark"]
        rows[task] = {"kind": kind, "items": items, "lm_eval_seconds": round(plain, 1), "benchmark": benchmark_counts}
        audit = [str(bin_dir / "lm-eval-contam"), "audit", "--model", model, "--label", "bench", *common,
                 "--no-chat-template", *shlex.split(args.audit_args)]
        for name in audits:
            extra = ["--reference-model", str(reference_copy(model, out))] if name == "reference" else []
            audit_dir = out / f"audit_{name}" / task
            seconds = timed([*audit, *extra, "--output_path", str(audit_dir)], out / f"{task}.audit_{name}.log")
            runs = audit_dir / "runs"
            rows[task][name] = {"audit_seconds": round(seconds, 1), "ratio": round(seconds / plain, 2),
                                "audit": request_counts(runs / "bench", tokenizer),
                                **({"reference_model": request_counts(runs / "bench.reference", tokenizer)}
                                   if extra else {})}
            title = (f"{task}: {kind}, {items} items; plain lm_eval {plain:.1f} s, {name} audit {seconds:.1f} s "
                     f"(ratio {seconds / plain:.2f}x)")
            print(table(f"{title}; the audited model's run", rows[task][name]["audit"], benchmark_counts), flush=True)
            if extra:
                print(table(f"{title}; the reference model's run", rows[task][name]["reference_model"],
                            benchmark_counts), flush=True)
    (out / "bench.json").write_text(json.dumps({"model": model, "batch_size": args.batch_size, "group": args.group,
                                                "audit_args": args.audit_args, "benchmarks": rows}, indent=1))
    for task, row in rows.items():
        for name in audits:
            print(f"{task} ({row['kind']}, {row['items']} items): {name} audit {row[name]['audit_seconds']:.0f} s, "
                  f"lm_eval {row['lm_eval_seconds']:.0f} s, ratio {row[name]['ratio']:.2f}x")


def reference_copy(model: str, out: Path) -> Path:
    """The model's weights under another identity (a card added), made once under ``out``: a reference that costs
    what the model costs, which an audit takes (the model itself is refused as its own reference)."""
    copy = out / "reference_model"
    if not copy.exists():
        shutil.copytree(model, copy)
        (copy / "README.md").write_text("The audited model's weights, copied as a same-size reference.\n")
    return copy


def table(title: str, audit: dict[str, dict[str, int]], benchmark: dict[str, int]) -> str:
    """One audit run's markdown table: each method's requests and tokens, and their ratio to the benchmark's."""
    base = benchmark["tokens"]
    lines = [f"\n{title}\n",
             "| part of the audit | requests | forward passes | tokens read | tokens / benchmark's |",
             "|---|---|---|---|---|"]
    for method, counts in sorted(audit.items(), key=lambda item: -item[1]["tokens"]):
        requests = ", ".join(f"{count} {kind.removesuffix(' requests')}" for kind, count in sorted(counts.items())
                             if kind.endswith(" requests"))
        lines.append(f"| {method} | {requests} | {counts.get('passes', 0)} | {counts.get('tokens', 0)} | "
                     f"{counts.get('tokens', 0) / base:.2f} |")
    passes = sum(counts.get("passes", 0) for counts in audit.values())
    total = sum(counts.get("tokens", 0) for counts in audit.values())
    lines.append(f"| **audit, all** | | {passes} | {total} | {total / base:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
