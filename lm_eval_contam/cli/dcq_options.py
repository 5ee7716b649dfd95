"""``lm-eval-contam dcq-options``: generate and cache the DCQ's four perturbations per instance.

Samples the partition exactly as the dcq task does (same ``--num-instances`` and
``--seed``), skips instances already in the cache, generates options with an
instruct model (the paper's prompt, temperature 1.0) or the offline WordNet
perturber, validates and retries them, appends the valid ones to ``--out`` and
writes the instances that still fail to ``<out>.failures.jsonl`` (exit code 1).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval_contam.errors import ContamError

OFFLINE = "offline"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "dcq-options",
        help="generate and cache the Data Contamination Quiz options of a partition",
        description=__doc__,
    )
    parser.add_argument("--dataset", required=True,
                        help="a registry key (a Hub dataset such as ag_news, or a shipped sample such as toy_news) "
                             "or a local JSONL file")
    parser.add_argument("--split", required=True, help="the partition (for a JSONL file: the split name the quiz shows)")
    parser.add_argument("--generator", required=True,
                        help=f"instruct model (HF folder / Hub id, or <lm-eval backend>:<model_args>), or {OFFLINE!r} "
                             "for the WordNet perturber")
    parser.add_argument("--out", type=Path, default=None,
                        help="options cache (JSONL); default $LM_EVAL_CONTAM_HOME/dcq/options.jsonl, which dcq tasks read")
    parser.add_argument("--num-instances", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
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
    model.add_argument("--max-gen-toks", type=int, default=1024)
    parser.add_argument("--no-progress", action="store_true")
    parser.set_defaults(func=_main)


CHUNK_INSTANCES = 8  # instances per appended chunk


def partition_and_rows(args: argparse.Namespace):
    from lm_eval_contam import partitions
    from lm_eval_contam.dcq.instances import QuizPartition
    from lm_eval_contam.jsonl import read_jsonl_objects

    registry = {**partitions.DATASETS, **partitions.SAMPLE_DATASETS}
    if args.dataset in registry:
        partition = QuizPartition.from_dataset(args.dataset, args.split)
        return partition, partitions.partition_rows(registry[args.dataset], args.split)
    path = Path(args.dataset)
    if not path.is_file():
        raise ContamError(f"neither a registry key ({', '.join(sorted(registry))}) nor a file", field="--dataset",
                          source=str(path))
    if not args.dataset_name or not args.columns:
        raise ContamError("a JSONL partition needs --dataset-name and --columns", source=str(path))
    partition = QuizPartition(
        display_name=args.dataset_name,
        split=args.split,
        columns=tuple(args.columns.split(",")),
        label_field=args.label_field,
        label_names=tuple(args.label_names.split(",")) if args.label_names else (),
    )
    return partition, read_jsonl_objects(path)


def _main(args: argparse.Namespace) -> int:
    from lm_eval_contam.dcq.options import (
        append_options,
        collect_options,
        model_completer,
        model_proposer,
        read_options,
        write_failures,
    )
    from lm_eval_contam.dcq.task import default_options_path

    out = args.out or default_options_path()
    partition, rows = partition_and_rows(args)
    instances = partition.sample(rows, args.num_instances, args.seed)
    cached = read_options(out, max_length_change=args.max_length_change)
    todo = [instance for instance in instances if instance.key not in cached]
    print(f"{partition.display_name} {partition.split}: {len(instances)} instances, "
          f"{len(instances) - len(todo)} already in {out}")
    if not todo:
        return 0
    if args.generator == OFFLINE:
        from lm_eval_contam.dcq.perturb import offline_proposer

        propose = offline_proposer(args.seed)
    else:
        propose = model_proposer(model_completer(args.generator, device=args.device, batch_size=args.batch_size,
                                                 max_gen_toks=args.max_gen_toks))
    # Appended chunk by chunk, so an interrupted run keeps what it finished and a re-run resumes.
    written, failures = 0, []
    for start in range(0, len(todo), CHUNK_INSTANCES):
        run = collect_options(todo[start : start + CHUNK_INSTANCES], propose, generator=args.generator,
                              attempts=args.attempts, max_length_change=args.max_length_change,
                              progress=not args.no_progress)
        append_options(out, run.entries)
        written += len(run.entries)
        failures += run.failures
    print(f"wrote {written} option sets to {out}")
    if failures:
        failures_path = out.with_name(out.name + ".failures.jsonl")
        write_failures(failures_path, failures)
        print(f"{len(failures)} instances still invalid after {args.attempts} attempts; see {failures_path}:")
        for failure in failures[:5]:
            print(f"  {failure.instance[:70]!r}: {'; '.join(failure.problems)}")
        return 1
    return 0
