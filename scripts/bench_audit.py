"""Cost of an audit: wall time vs a plain lm-eval generate run over the same prompts, and each family's cost.

    python scripts/bench_audit.py [--model PATH] [--partition toy_news:train] [--max_gen_toks 48]

Measured side by side in one process on the same model:
1. the audit (every registered method's tasks for the partition, DCQ in loglikelihood mode), cache off;
2. a stock lm-eval ``generate_until`` task over exactly the prompts the audit's generation tasks send
   (each Time Travel guided and general prompt, each of the five quizzes per instance),
   generating up to the same ``max_gen_toks``;
3. each registered method's tasks alone at batch size 1, counting requests and the HF model's forward and generate
   calls, so "forward passes per request" is exact.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


def audit_prompts(run_dir: Path) -> list[str]:
    """Every prompt the audit's generation-family tasks sent (Time Travel, DCQ), rebuilt from their logged docs."""
    from lm_eval_contam.methods.dcq.quiz import build_quizzes, quiz_prompt

    prompts: list[str] = []
    paths = [*run_dir.rglob("samples_timetravel_*.jsonl"), *run_dir.rglob("samples_dcq_*.jsonl")]
    for path in sorted(paths):
        for line in path.read_text(encoding="utf-8").splitlines():
            doc = json.loads(line)["doc"]
            if "guided_prompt" in doc:
                prompts += [doc["guided_prompt"], doc["general_prompt"]]
            elif "options" in doc:
                prompts += [quiz_prompt(quiz.options, split_name=doc["split"], dataset_name=doc["dataset_name"])
                            for quiz in build_quizzes(doc["instance"], doc["options"])]
    return prompts


def plain_generate_seconds(model_args: str, prompts: list[str], max_gen_toks: int, work: Path, batch_size: int) -> float:
    import lm_eval
    from lm_eval.tasks import TaskManager

    from lm_eval_contam.lmeval.generation import default_device

    data = work / "prompts.jsonl"
    data.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in prompts), encoding="utf-8")
    (work / "bench_plain_generate.yaml").write_text(
        f"""task: bench_plain_generate
dataset_path: json
dataset_kwargs: {{data_files: {{test: {json.dumps(str(data))}}}}}
test_split: test
output_type: generate_until
doc_to_text: "{{{{prompt}}}}"
doc_to_target: ""
generation_kwargs: {{until: [], do_sample: false, max_gen_toks: {max_gen_toks}}}
metric_list: [{{metric: bypass}}]
metadata: {{version: 1.0}}
""",
        encoding="utf-8",
    )
    started = time.perf_counter()
    lm_eval.simple_evaluate(model="hf", model_args=model_args, tasks=["bench_plain_generate"], batch_size=batch_size,
                            device=default_device(),
                            task_manager=TaskManager(include_path=[str(work)], include_defaults=False),
                            apply_chat_template=True)
    return time.perf_counter() - started


@dataclass(frozen=True)
class FamilyCost:
    family: str
    seconds: float
    requests: int
    forward_calls: int
    generate_calls: int


def family_cost(family: str, model_args: str, tasks: list[str], max_gen_toks: int) -> FamilyCost:
    """One family's tasks alone at batch size 1: wall time, requests, and the HF model's forward/generate calls."""
    import lm_eval
    from lm_eval.models.huggingface import HFLM

    from lm_eval_contam.harness import task_manager
    from lm_eval_contam.harness.evaluation import evaluation_tasks
    from lm_eval_contam.lmeval.generation import default_device

    counts = {"_model_call": 0, "_model_generate": 0}
    originals = {name: getattr(HFLM, name) for name in counts}

    def counting(name):
        def counted(self, *args, **kwargs):
            counts[name] += 1
            return originals[name](self, *args, **kwargs)
        return counted

    for name in counts:
        setattr(HFLM, name, counting(name))
    manager = task_manager()
    started = time.perf_counter()
    try:
        results = lm_eval.simple_evaluate(model="hf", model_args=model_args,
                                          tasks=evaluation_tasks(tasks, manager, max_gen_toks, {}), batch_size=1,
                                          device=default_device(), task_manager=manager, apply_chat_template=True,
                                          log_samples=True)
    finally:
        for name, original in originals.items():
            setattr(HFLM, name, original)
    seconds = time.perf_counter() - started
    requests = sum(len(sample["arguments"]) for task in tasks for sample in results["samples"][task])
    return FamilyCost(family, seconds, requests, counts["_model_call"], counts["_model_generate"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="HF folder (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--partition", default="toy_news:train")
    parser.add_argument("--max_gen_toks", type=int, default=48)
    parser.add_argument("--batch_size", type=int, default=8)
    args = parser.parse_args()

    from lm_eval_contam.audit.job import AuditSettings, partition_tasks, run_model
    from lm_eval_contam.core.registry import registered_methods
    from lm_eval_contam.lmeval.generation import ModelSpec
    from lm_eval_contam.models.default_model import default_model_path

    model = args.model or str(default_model_path())
    model_args = f"pretrained={model}"
    tasks = partition_tasks(args.partition, ["loglikelihood"])
    families = {spec.title: names for spec in registered_methods()
                if (names := [task for task in tasks if task.startswith(f"{spec.name}_")])}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        settings = AuditSettings(partitions=(args.partition,), max_gen_toks=args.max_gen_toks,
                                 batch_size=args.batch_size)
        run = run_model(ModelSpec.parse(model), "bench", work / "audit", settings)
        audit_s = run.seconds
        prompts = audit_prompts(work / "audit" / run.run_dir)
        plain_s = plain_generate_seconds(model_args, prompts, args.max_gen_toks, work, args.batch_size)
        costs = [family_cost(family, model_args, names, args.max_gen_toks) for family, names in families.items()]
    print(f"\nmodel {model}, partition {args.partition}, {len(prompts)} generation-task prompts, "
          f"max_gen_toks {args.max_gen_toks}, batch size {args.batch_size}")
    print(f"audit ({', '.join(families)}): {audit_s:.1f} s")
    print(f"plain lm-eval generate over the generation tasks' prompts: {plain_s:.1f} s")
    print(f"ratio audit / plain: {audit_s / plain_s:.2f}")
    print("\n| family (alone, batch size 1) | wall s | requests | forward calls | generate calls | "
          "forward passes per request |\n|---|---|---|---|---|---|")
    for cost in costs:
        per_request = f"{cost.forward_calls / cost.requests:.2f}" if not cost.generate_calls else "— (generation)"
        print(f"| {cost.family} | {cost.seconds:.1f} | {cost.requests} | {cost.forward_calls} | "
              f"{cost.generate_calls} | {per_request} |")


if __name__ == "__main__":
    main()
