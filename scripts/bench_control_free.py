"""Cost of the control-free tests beside the benchmark's own evaluation, measured side by side in one process.

    python scripts/bench_control_free.py [--model PATH] [--reference PATH] [--dataset science] [--batch_size 8]
        [--device cpu]

One multiple-choice benchmark of the shipped fresh items (lm_eval_contam/nullstudy/fresh/mc_<dataset>_a.jsonl, 24
items, MMLU-style prompt, four lettered options) on the same model, cache off, in this order:
1. the benchmark as lm-eval evaluates it (``multiple_choice``: one log-likelihood request per option);
2. the in-context test over the same items as ``audit --tasks`` renders them (four scored texts per item, two after
   a context of three other items);
3. the option-order test as an audit without a reference runs it (the rank test's five orders per item);
4. the option-order task as ``--reference-model`` renders it (every admissible order per item: up to 24 for four
   options, which the tests on u read), run by the audited model and again by the reference model (``--reference``,
   default the model itself: the cost is the same).
Prints wall seconds, requests and scored tokens (prompt + continuation, as the model sees them) per task, and each
test's ratio to the benchmark.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

BENCHMARK_YAML = """task: bench_fresh_mc
dataset_path: json
dataset_kwargs: {{data_files: {{test: {data}}}}}
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question.strip()}}}}\\nA. {{{{choices[0]}}}}\\nB. {{{{choices[1]}}}}\\nC. {{{{choices[2]}}}}\\nD. {{{{choices[3]}}}}\\nAnswer:"
doc_to_choice: ["A", "B", "C", "D"]
doc_to_target: answer
metric_list: [{{metric: acc}}]
metadata: {{version: 1.0}}
"""


def run(task_dir: Path, task: str, model_args: str, batch_size: int, device: str) -> tuple[float, int, int]:
    """(seconds, requests, tokens scored) of one lm-eval run of ``task``, cache off."""
    import lm_eval
    from transformers import AutoTokenizer

    from lm_eval_contam import harness

    manager = harness.task_manager(str(task_dir))
    started = time.perf_counter()
    results = lm_eval.simple_evaluate(model="hf", model_args=model_args, tasks=[task], batch_size=batch_size,
                                      device=device, log_samples=True, task_manager=manager)
    seconds = time.perf_counter() - started
    tokenizer = AutoTokenizer.from_pretrained(model_args.split("pretrained=")[1].split(",")[0])
    requests = tokens = 0
    for sample in results["samples"][task]:
        logged = sample["arguments"]  # lm-eval logs {"gen_args_<i>": {"arg_0": ..., "arg_1": ...}} per request
        for arguments in (logged.values() if isinstance(logged, dict) else logged):
            parts = arguments.values() if isinstance(arguments, dict) else arguments
            requests += 1
            tokens += len(tokenizer("".join(part for part in parts if isinstance(part, str)))["input_ids"])
    return seconds, requests, tokens


def main() -> None:
    from lm_eval_contam import task_dir as templates
    from lm_eval_contam.core.jsonl import write_jsonl
    from lm_eval_contam.core.partitions import dataset_from_task_metadata
    from lm_eval_contam.core.registry import RenderTarget, method_of
    from lm_eval_contam.models.default_model import default_model_path
    from lm_eval_contam.nullstudy.validation import FRESH_DIR, render_question

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="HF folder (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--reference", help="the reference model's HF folder (default: the model itself)")
    parser.add_argument("--dataset", default="science", help="a shipped fresh multiple-choice dataset")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--device", default="cpu", help="e.g. cuda:0")
    args = parser.parse_args()
    model_args = f"pretrained={args.model or default_model_path()},dtype=float32"
    reference_args = f"pretrained={args.reference or args.model or default_model_path()},dtype=float32"
    items = [json.loads(line) for line in (FRESH_DIR / f"mc_{args.dataset}_a.jsonl").read_text().splitlines()]
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "tasks"
        work.mkdir()
        raw = write_jsonl(work / "items.jsonl", items)
        rendered = write_jsonl(work / "rendered.jsonl", [
            {"text": render_question(item["question"], item["choices"]), "answer": "ABCD"[item["answer"]],
             "choices": list("ABCD"), "doc_index": index} for index, item in enumerate(items)])
        (work / "bench_fresh_mc.yaml").write_text(BENCHMARK_YAML.format(data=json.dumps(str(raw))))
        partition = dataset_from_task_metadata({
            "dataset_name": "Bench Fresh", "data_files": {"test": str(rendered)}, "task_type": "question",
            "text_field": "text", "label_field": "answer", "columns": ["text", "answer"],
            "companion_field": "answer"}).partition("test")
        # The option-order task as --reference-model renders it (every order) has the same name: a folder of its own,
        # beside (not under) the one lm-eval indexes for the others.
        every_order = Path(scratch) / "every_order"
        every_order.mkdir()
        names = {}
        for family, reference in (("incontext", False), ("optionorder", False), ("optionorder", True)):
            target = RenderTarget(templates=templates(), options_path=work / "options.jsonl", reference=reference)
            for name, text in method_of(family).render_task_configs(partition, target).items():
                ((every_order if reference else work) / f"{name}.yaml").write_text(text)
                names[family] = name
        runs = (("benchmark (multiple_choice)", work, "bench_fresh_mc", model_args),
                ("in-context test", work, names["incontext"], model_args),
                ("option-order test, no reference (the rank test's five orders)", work, names["optionorder"],
                 model_args),
                ("option-order task with --reference-model: the audited model's run (every order)", every_order,
                 names["optionorder"], model_args),
                ("option-order task with --reference-model: the reference model's run", every_order,
                 names["optionorder"], reference_args))
        measured = {label: run(folder, task, arguments, args.batch_size, args.device)
                    for label, folder, task, arguments in runs}
    base_seconds, _, base_tokens = measured["benchmark (multiple_choice)"]
    print(f"| task ({len(items)} items, batch size {args.batch_size}) | wall s | requests | tokens scored | "
          "ratio to the benchmark (time) | ratio (tokens) |")
    print("|---|---|---|---|---|---|")
    for label, (seconds, requests, tokens) in measured.items():
        print(f"| {label} | {seconds:.1f} | {requests} | {tokens} | {seconds / base_seconds:.2f} | "
              f"{tokens / base_tokens:.2f} |")
    both = [measured[label] for label, *_ in runs[-2:]]
    print(f"| option-order test with --reference-model (both runs) | {sum(m[0] for m in both):.1f} | "
          f"{sum(m[1] for m in both)} | {sum(m[2] for m in both)} | {sum(m[0] for m in both) / base_seconds:.2f} | "
          f"{sum(m[2] for m in both) / base_tokens:.2f} |")


if __name__ == "__main__":
    main()
