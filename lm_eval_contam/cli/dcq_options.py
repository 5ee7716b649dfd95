"""``lm-eval-contam dcq-options``: generate and cache the DCQ's four perturbations per instance.

Samples the partition exactly as the dcq task does (``--task`` reads the task's
own partition, ``num_instances``, seed and options file), skips instances already in the cache, generates options with an
instruct model (the paper's prompt, temperature 1.0) or the offline WordNet
perturber, validates and retries them, appends the valid ones to ``--out`` and
writes the instances that still fail to ``<out>.failures.jsonl`` (exit code 1).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import DATASETS, SAMPLE_DATASETS, Partition, dataset_from_task_metadata
from lm_eval_contam.harness import task_manager
from lm_eval_contam.kit.instances import DEFAULT_NUM_INSTANCES, sample_instances
from lm_eval_contam.kit.quiz_options import default_options_path, failures_path, make_options, proposer
from lm_eval_contam.lmeval.lm_eval_compat import built_tasks
from lm_eval_contam.methods.dcq.task import DCQSettings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "dcq-options",
        help="generate and cache the Data Contamination Quiz options of a partition",
        description=__doc__,
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--task", help="a DCQ task: its partition, num_instances, seed and options file are used")
    which.add_argument("--dataset",
                       help="a registry key (a Hub dataset such as ag_news, or a shipped sample such as toy_news) "
                            "or a local JSONL file")
    parser.add_argument("--split", help="with --dataset: the partition (for a JSONL file: the split name the quiz shows)")
    parser.add_argument("--include_path", action="append", default=[], help="with --task: extra task directory")
    parser.add_argument("--generator", required=True,
                        help="instruct model (HF folder / Hub id, or <lm-eval backend>:<model_args>), or 'offline' "
                             "for the WordNet perturber")
    parser.add_argument("--out", type=Path, default=None,
                        help="options cache (JSONL); default $LM_EVAL_CONTAM_HOME/dcq/options.jsonl, which dcq tasks read")
    parser.add_argument("--num-instances", type=int, default=None, help="default: the task's, else 100")
    parser.add_argument("--seed", type=int, default=None, help="default: the task's, else 0")
    parser.add_argument("--attempts", type=int, default=3, help="tries per instance before it is reported as failed")
    parser.add_argument("--max-length-change", type=float, default=0.5,
                        help="largest allowed length change of an option, as a fraction of the original")
    local = parser.add_argument_group("local JSONL partitions")
    local.add_argument("--dataset-name", help="the dataset's name as the quiz prompt shows it")
    local.add_argument("--columns", help="comma-separated columns of the instance string, in order")
    local.add_argument("--label-field", default=None, help="the label column (its line must stay unchanged)")
    local.add_argument("--label-names", default=None, help="comma-separated label names, index order")
    model = parser.add_argument_group("model generators")
    model.add_argument("--device", default=None, help="default: cuda when available, else cpu")
    model.add_argument("--batch-size", default=1)
    # The paper's budget (quiz_options.GENERATION_MAX_NEW_TOKENS; not imported here to keep the CLI's start light).
    model.add_argument("--max-gen-toks", type=int, default=4000, help="new-token cap per generation (default: 4000)")
    parser.add_argument("--no-progress", action="store_true")
    parser.set_defaults(func=_main, every_method=True)  # plans or runs the methods: a broken plug-in stops it


@dataclass(frozen=True)
class QuizTarget:
    """What to make options for: a partition's rows, how many instances, which seed, which cache."""

    partition: Partition
    rows: list[dict]
    num_instances: int
    seed: int
    out: Path


def from_task(args: argparse.Namespace) -> QuizTarget:
    """Everything from the DCQ task's own config, as the task will read it."""
    manager = task_manager(tuple(args.include_path))
    if args.task not in manager.all_subtasks:
        raise ContamError("no such lm-eval task", field="--task", source=args.task)
    task = built_tasks(manager, [args.task])[args.task]
    settings = DCQSettings.from_metadata(task.config.metadata, task.config.test_split)
    rows = list(task.dataset[task.config.test_split])
    return QuizTarget(settings.partition, rows, args.num_instances or settings.num_instances,
                      settings.seed if args.seed is None else args.seed, args.out or settings.options_path)


def from_dataset(args: argparse.Namespace) -> QuizTarget:
    if not args.split:
        raise ContamError("--dataset needs --split", field="--split")
    registry = {**DATASETS, **SAMPLE_DATASETS}
    if args.dataset not in registry:
        path = Path(args.dataset)
        if not path.is_file():
            raise ContamError(f"neither a registry key ({', '.join(sorted(registry))}) nor a file", field="--dataset",
                              source=str(path))
        if not args.dataset_name or not args.columns:
            raise ContamError("a JSONL partition needs --dataset-name and --columns", source=str(path))
        columns = args.columns.split(",")
        metadata = {"dataset_name": args.dataset_name, "data_files": {args.split: str(path.resolve())},
                    "text_field": columns[0], "columns": columns, "label_field": args.label_field,
                    "label_names": args.label_names.split(",") if args.label_names else []}
        partition = dataset_from_task_metadata(metadata).partition(args.split)
    else:
        partition = Partition.parse(f"{args.dataset}:{args.split}")
    rows = partition.rows()
    if not rows:  # docs/guide/cli.md: an empty partition is an error (exit 2), not an empty quiz
        raise ContamError("no rows: the partition is empty", source=args.dataset, field="--dataset")
    return QuizTarget(partition, rows, args.num_instances or DEFAULT_NUM_INSTANCES,
                      0 if args.seed is None else args.seed, args.out or default_options_path())


def _main(args: argparse.Namespace) -> int:
    target = from_task(args) if args.task else from_dataset(args)
    instances = sample_instances(target.partition, target.rows, target.num_instances, target.seed)
    report = make_options(instances, target.out, proposer(args.generator, target.seed, device=args.device,
                                                          batch_size=args.batch_size, max_gen_toks=args.max_gen_toks),
                          generator=args.generator, attempts=args.attempts, max_length_change=args.max_length_change,
                          progress=not args.no_progress)
    print(f"{target.partition.label}: {report.instances} instances, {report.cached} already in {target.out}; "
          f"wrote {report.written} option sets")
    if report.failures:
        print(f"{len(report.failures)} instances still invalid after {args.attempts} attempts (the quiz leaves them "
              f"out); see {failures_path(target.out)}:")
        for failure in report.failures[:5]:
            print(f"  {failure.instance[:70]!r}: {'; '.join(failure.problems)}")
        return 1
    return 0

