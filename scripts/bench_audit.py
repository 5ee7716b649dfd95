"""Cost of an audit: wall time vs a plain lm-eval generate run over the same prompts, and DCQ passes per quiz.

    python scripts/bench_audit.py [--model PATH] [--partition toy_news:train] [--max_gen_toks 48]

Measured side by side in one process on the same model:
1. the audit (Time Travel + DCQ in loglikelihood mode) of one partition, cache off;
2. a stock lm-eval ``generate_until`` task over exactly the prompts the audit sends
   (each Time Travel guided and general prompt, each of the five quizzes per instance),
   generating up to the same ``max_gen_toks``;
3. a DCQ loglikelihood run alone, counting the HF model's forward calls per quiz.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def audit_prompts(run_dir: Path) -> list[str]:
    """Every prompt the audit sent, rebuilt from its logged docs."""
    from lm_eval_contam.dcq.quiz import build_quizzes, quiz_prompt

    prompts: list[str] = []
    for path in sorted(run_dir.rglob("samples_*.jsonl")):
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

    from lm_eval_contam.generation import default_device

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


def dcq_forward_passes(model_args: str, task: str, batch_size: int) -> tuple[int, int]:
    """(forward calls, quizzes) of one DCQ loglikelihood run."""
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from lm_eval_contam import task_dir
    from lm_eval_contam.generation import default_device

    calls = 0
    original = HFLM._model_call

    def counted(self, *args, **kwargs):
        nonlocal calls
        calls += 1
        return original(self, *args, **kwargs)

    HFLM._model_call = counted
    try:
        results = lm_eval.simple_evaluate(model="hf", model_args=model_args, tasks=[task], batch_size=batch_size,
                                          device=default_device(),
                                          task_manager=TaskManager(include_path=[str(task_dir())],
                                                                   include_defaults=False),
                                          apply_chat_template=True, log_samples=True)
    finally:
        HFLM._model_call = original
    return calls, 5 * len(results["samples"][task])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="HF folder (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--partition", default="toy_news:train")
    parser.add_argument("--max_gen_toks", type=int, default=48)
    parser.add_argument("--batch_size", type=int, default=8)
    args = parser.parse_args()

    from lm_eval_contam.audit import AuditSettings, partition_tasks, run_model
    from lm_eval_contam.default_model import default_model_path

    model = args.model or str(default_model_path())
    model_args = f"pretrained={model}"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        settings = AuditSettings(partitions=(args.partition,), max_gen_toks=args.max_gen_toks,
                                 batch_size=args.batch_size)
        run = run_model(model, "bench", work / "audit", settings)
        audit_s = run.seconds
        prompts = audit_prompts(work / "audit" / run.run_dir)
        plain_s = plain_generate_seconds(model_args, prompts, args.max_gen_toks, work, args.batch_size)
        dcq_task = partition_tasks(args.partition, ["loglikelihood"])[1]
        calls, quizzes = dcq_forward_passes(model_args, dcq_task, 1)
    print(f"\nmodel {model}, partition {args.partition}, {len(prompts)} prompts, max_gen_toks {args.max_gen_toks}, "
          f"batch size {args.batch_size}")
    print(f"audit (Time Travel + DCQ loglikelihood): {audit_s:.1f} s")
    print(f"plain lm-eval generate over the same prompts: {plain_s:.1f} s")
    print(f"ratio audit / plain: {audit_s / plain_s:.2f}")
    print(f"DCQ loglikelihood mode: {calls} forward calls for {quizzes} quizzes = {calls / quizzes:.2f} per quiz")


if __name__ == "__main__":
    main()
