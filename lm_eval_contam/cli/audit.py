"""``lm-eval-contam audit``: Time Travel + DCQ (+ DCR) for a model over partitions, then the report.

With no ``--model`` it audits the embedded SmolLM2-135M-Instruct; with no
``--partitions`` (nor ``--tasks``, nor ``--data``) the project's shipped sample partitions.
``--tasks`` audits lm-eval tasks and groups as they are: each (sub)task's rendered evaluation
docs become a partition (see docs/guide/audit-tasks.md). Re-running the same
command resumes: lm-eval's request cache under ``<output_path>/cache`` answers
every request already computed.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import get_args

from lm_eval_contam import report
from lm_eval_contam.audit.benchmark_partitions import BENCHMARK_SAMPLE, CONTROL_ITEMS, requested_control
from lm_eval_contam.audit.job import (
    AuditSettings,
    DerivedBenchmarks,
    LoadedBenchmarks,
    derive_benchmark_partitions,
    group_summaries,
    run_model,
    write_benchmark_partitions,
)
from lm_eval_contam.audit.own_data import OwnData, write_card
from lm_eval_contam.audit.reference_model import (
    ChosenReference,
    as_lm_eval_loads_adapters,
    check_reference_model,
    choose_reference,
    suggestion,
)
from lm_eval_contam.core.audit_identity import check_same_audit, claimed
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.input_checks import (
    COMPARED_ROWS_MINIMUM,
    check_control_flags,
    check_include_paths,
    check_label,
    check_limit,
    check_output_dir,
    name_list,
)
from lm_eval_contam.core.partitions import Control, TaskType, sample_partitions
from lm_eval_contam.core.registry import registered_methods
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.methods.dcq.configs import ANSWER_MODES as DCQ_MODES
from lm_eval_contam.methods.dcr.configs import METHOD as DCR_METHOD
from lm_eval_contam.methods.likelihood.configs import METHOD as LIKELIHOOD_METHOD
from lm_eval_contam.methods.reordered.orders import (
    DEFAULT_REORDERINGS,
    MAX_REORDERINGS,
    METHOD as REORDERED_METHOD,
    REFERENCE_ITEMS,
    REFERENCE_ITEMS_KEY,
    REORDERED_FORMS,
    check_reference_items,
    check_reorderings,
)
from lm_eval_contam.methods.timetravel.judge_b import judge_output_path
from lm_eval_contam.models.default_model import default_model_path
from lm_eval_contam.verdicts.verdict import methods_without_a_call


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("audit", help="audit a model for contamination (Time Travel + DCQ [+ DCR]) and "
                                                 "write report.html/report.md", description=__doc__)
    add_model_arguments(parser)
    parser.add_argument("--model", help="HF folder / Hub id, or <lm-eval backend>:<model_args> "
                                        "(default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--label", help="name of this model in the report (default: the model folder's name)")
    parser.add_argument("--reference-model", metavar="SPEC",
                        help="the checkpoint the audited model was fine-tuned from (HF folder / Hub id, or <lm-eval "
                             "backend>:<model_args>; 'auto': the base its folder's model card or adapter_config.json "
                             "names): it scores the same texts, and the reference-differenced tests read u = log "
                             "p(model) - log p(reference) per text (default: none; a PEFT adapter's base)")
    parser.add_argument("--output_path", type=Path, default=Path("contamination_audit"),
                        help="audit directory (default: ./contamination_audit)")
    parser.add_argument("--dcq-generator", default="offline",
                        help="makes the quiz options a partition lacks: 'offline' (WordNet perturber, default) or an "
                             "instruct model (HF folder / Hub id, or <lm-eval backend>:<model_args>)")
    tasks = parser.add_argument_group("the benchmarks you already run (instead of, or beside, --partitions)")
    tasks.add_argument("--tasks", help="comma-separated lm-eval tasks or groups (registered, e.g. arc_easy,mmlu, or "
                                       "your own YAML with --include_path): each (sub)task's rendered evaluation docs "
                                       "become a partition, and the tasks run too")
    tasks.add_argument("--sample", type=int, metavar="N",
                       help=f"instances per benchmark in the sample the methods draw (default {BENCHMARK_SAMPLE}: the "
                            "validation study's partition size, whose measured power the report quotes; 0: the "
                            "methods' own, 100; Time Travel keeps its 10, the reordered score every item)")
    tasks.add_argument("--control-items", dest="control_items", type=int, metavar="N",
                       help=f"with --tasks: items per side the split-control tests compare (default {CONTROL_ITEMS}: "
                            "every item of both splits up to it, a seeded sample of a larger split; their level is "
                            "exact when the splits are exchangeable, at any size)")
    tasks.add_argument("--control-split", dest="control_split",
                       help="with --tasks: another split of the task's dataset the model cannot have seen (the "
                            "likelihood modes' control; default: the task's own second split, validation, then "
                            "train, then fewshot); with --data: the --control-data file's split name")
    tasks.add_argument("--no-split-control", action="store_true",
                       help="with --tasks: no control unless --control-split/--control-data names one (by default "
                            "the task's own second split is the control, assumed exchangeable with the audited one)")
    tasks.add_argument("--per-subtask", action="store_true",
                       help="--tasks groups: each subtask its own partition (its own sample and tests) and its own DCR "
                            "sheet, as before (default: one partition and one DCR sheet drawn across the group's "
                            "subtasks, whose verdicts describe the group; docs/guide/cost.md)")
    own = parser.add_argument_group("your own benchmark (instead of, or beside, --partitions)")
    own.add_argument("--data", help="a .jsonl or .csv file, or a Hub dataset id")
    own.add_argument("--split", help="with --data: the split's name (the prompts name it), e.g. test")
    own.add_argument("--name", help="with --data: the dataset's name as the prompts show it, e.g. 'My Bench'")
    own.add_argument("--text-field", help="with --data: the column holding the text")
    own.add_argument("--second-field", help="with --data: NLI only, the hypothesis column")
    own.add_argument("--label-field", help="with --data: the label column (labelled data)")
    own.add_argument("--label-names", help="with --data: comma-separated label names in index order")
    own.add_argument("--task-type", choices=get_args(TaskType),
                     help="with --data: cls, nli, sum, xsum or question (default: from the fields given)")
    own.add_argument("--hf-name", help="with a Hub dataset id: its configuration name")
    own.add_argument("--control-data", help="a file of the same distribution the model cannot have seen (e.g. "
                                            "written after its cutoff): the likelihood modes' control; with --tasks a "
                                            "JSONL of docs in the task's schema")
    parser.set_defaults(func=_main, every_method=True)  # plans or runs the methods: a broken plug-in stops it


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags shared by ``audit`` and ``demo``."""
    parser.add_argument("--partitions", help="comma-separated DATASET:SPLIT (default: every shipped sample partition)")
    parser.add_argument("--dcq-mode", choices=(*DCQ_MODES, "both"), default="loglikelihood",
                        help="how the quiz is answered (loglikelihood: one forward pass per quiz; default)")
    parser.add_argument("--dcr-sheet", help="also run this DCR sheet (shipped name or YAML) and the benchmark it adjusts")
    parser.add_argument("--max_gen_toks", type=int, help="cap on Time Travel completions (default: the tasks' own)")
    parser.add_argument("--batch_size", default=1, help="lm-eval batch size (int or 'auto')")
    parser.add_argument("--device", help="e.g. cuda:0 or cpu (default: lm-eval's choice)")
    parser.add_argument("--no-chat-template", action="store_true",
                        help="send prompts as plain text (default: apply the model's chat template when it has one)")
    parser.add_argument("--benchmark-chat-template", action="store_true",
                        help="score the benchmark tasks (--tasks, a DCR sheet's) with the chat template too (default: "
                             "as lm_eval does without --apply_chat_template, so the score is the one you report)")
    parser.add_argument("--include_path", action="append", default=[], help="extra task directory (repeatable)")
    parser.add_argument("--limit", type=int, help="lm-eval's --limit (smoke runs only: statistics need every instance)")
    parser.add_argument("--no-likelihood", action="store_true",
                        help="skip the likelihood modes (ours; run by default on hf/vllm for registered partitions)")
    parser.add_argument("--judge-model", help="also classify Time Travel completions with Judge B using this model")
    parser.add_argument("--no-report", action="store_true", help="skip writing report.html/report.md")
    parser.add_argument("--methods", metavar="NAMES",
                        help="comma-separated registered methods to run (default: every one with a test that can "
                             "drive a verdict, i.e. all but those whose every test is measured over its level: "
                             "pairing, sentenceorder; e.g. optionorder,reordered for the cheap calibrated ones on "
                             "every subject: docs/guide/cost.md)")
    parser.add_argument("--dcr-per-subtask", action="store_true",
                        help="--tasks groups: a DCR sheet per subtask (its own factor on each) instead of one sheet "
                             "drawn across the group's subtasks (the default: one sheet's generations, not one per "
                             "subtask; docs/guide/cost.md)")
    parser.add_argument("--reorderings", type=int, metavar="K",
                        help=f"--tasks multiple-choice benchmarks: acc_reordered averages each item over K seeded "
                             f"reorderings of its options (default {DEFAULT_REORDERINGS}, fewer above 250 items: "
                             f"{REORDERED_FORMS} // items, at least 1; 0 to {MAX_REORDERINGS}, 0: off; "
                             f"see docs/guide/reordered.md)")
    parser.add_argument("--reference-items", type=int, metavar="N",
                        help=f"with --reference-model: the reference scores the reordered forms of a seeded sample of "
                             f"about N items of each --tasks benchmark or group (default {REFERENCE_ITEMS}; each "
                             f"subtask its share; 0: every item) for acc_reordered_gap_vs_reference; the audited "
                             f"model's acc_reordered covers every item (docs/guide/reordered.md)")


def settings_from_args(args: argparse.Namespace) -> AuditSettings:
    listed = name_list(args.partitions, "--partitions")
    partitions = listed if listed is not None else tuple(partition.name for partition in sample_partitions())
    batch_size = int(args.batch_size) if str(args.batch_size).isdigit() else args.batch_size
    return AuditSettings(
        partitions=partitions,
        quiz_modes=DCQ_MODES if args.dcq_mode == "both" else (args.dcq_mode,),
        method_inputs=((DCR_METHOD, args.dcr_sheet),) if args.dcr_sheet else (),
        max_gen_toks=args.max_gen_toks,
        batch_size=batch_size,
        device=args.device,
        apply_chat_template=False if args.no_chat_template else None,
        include_path=tuple(args.include_path),
        limit=args.limit,
        benchmark_chat_template=args.benchmark_chat_template,
        skip_methods=skipped_methods(args.methods, args.no_likelihood),
        adjustment_metadata=(*((("reorderings", args.reorderings),) if args.reorderings is not None else ()),
                             *(((REFERENCE_ITEMS_KEY, args.reference_items),) if args.reference_items is not None
                               else ()),
                             *((("dcr_per_subtask", True),) if args.dcr_per_subtask or per_subtask(args) else ())),
    )


def skipped_methods(methods: str | None, no_likelihood: bool) -> tuple[str, ...]:
    """The registered methods an audit leaves out: those ``--methods`` does not name (every one is checked to be
    registered; without it, those whose every test is measured over its level), and the likelihood modes with
    ``--no-likelihood``."""
    registered = [spec.name for spec in registered_methods()]
    chosen = name_list(methods, "--methods")
    for name in chosen or ():
        if name not in registered:
            raise ContamError(f"no registered method {name!r} (known: {', '.join(registered)})", field="--methods")
    left_out = methods_without_a_call() if chosen is None else [name for name in registered if name not in chosen]
    return tuple(name for name in registered
                 if name in left_out or (no_likelihood and name == LIKELIHOOD_METHOD))


def check_args(args: argparse.Namespace, label: str) -> tuple[dict, ModelSpec, ChosenReference | None]:
    """Every check that needs nothing written, in the order a user would fix them; the audit's identity, the model's
    spec (a local PEFT adapter folder as lm-eval loads it: on its base) and the reference model, given or found
    (parsed once, here: the audit takes them as they are)."""
    tasks = name_list(args.tasks, "--tasks")
    partitions = name_list(args.partitions, "--partitions")
    check_label(label)
    check_limit(args.limit)
    check_output_dir(args.output_path)
    check_include_paths(args.include_path)
    if args.reorderings is not None:
        check_reorderings(args.reorderings, source="--reorderings")
    if args.reference_items is not None:
        check_reference_items(args.reference_items, source="--reference-items")
    if args.sample is not None and (args.sample < 0 or 0 < args.sample < COMPARED_ROWS_MINIMUM):
        raise ContamError(f"got {args.sample}; expected a whole number of instances, {COMPARED_ROWS_MINIMUM} or more "
                          "(the tests compare samples of two or more; 0: the methods' own sample)", field="--sample")
    if getattr(args, "control_items", None) is not None and (tasks is None or args.control_items < COMPARED_ROWS_MINIMUM):
        raise ContamError(f"got {args.control_items}; expected a whole number of items, {COMPARED_ROWS_MINIMUM} or more, "
                          "with --tasks (the split-control tests compare the --tasks benchmarks' two splits)",
                          field="--control-items")
    if per_subtask(args) and tasks is None:
        raise ContamError("gives each subtask of a --tasks group its own partition; without --tasks there is no group: "
                          "leave it out, or audit with --tasks", field="--per-subtask")
    if args.sample is not None and tasks is None:
        raise ContamError("samples the --tasks benchmarks' instances; --data and --partitions partitions keep their "
                          "methods' own samples, so it would be ignored: leave it out, or audit with --tasks",
                          field="--sample")
    skipped_methods(args.methods, args.no_likelihood)
    check_control_flags(control_split=args.control_split, control_data=args.control_data, tasks=tasks is not None,
                        data=args.data is not None, no_split_control=args.no_split_control)
    spec = as_lm_eval_loads_adapters(ModelSpec.parse(args.model or str(default_model_path())))
    spec.check()
    reference = choose_reference(args.reference_model, spec)
    if reference is not None:
        try:
            check_reference_model(reference.spec, spec)
        except ContamError as error:  # a base found through a card or adapter_config.json: name where it was found
            if reference.found_by is None:
                raise
            raise ContamError(f"{error.reason} (found: {reference.found_by})", source=error.source,
                              field=error.field) from None
    elif args.reference_items is not None:
        raise ContamError("sets how many items the reference model scores, and this audit has none: leave it out, or "
                          "give --reference-model", field="--reference-items")
    if args.reference_items is not None and (tasks is None or args.reorderings == 0
                                             or REORDERED_METHOD in skipped_methods(args.methods, args.no_likelihood)):
        why = ("no --tasks benchmark" if tasks is None else "--reorderings 0" if args.reorderings == 0
               else "--methods leaves out reordered")
        raise ContamError(f"sets the reference's sample for acc_reordered_gap_vs_reference, and this audit computes no "
                          f"reordered score ({why}), so it would be ignored: leave it out", field="--reference-items")
    own = {flag: getattr(args, flag) for flag in ("data", "split", "name", "text_field", "second_field", "label_field",
                                                  "label_names", "task_type", "hf_name")}
    identity = {"partitions": list(partitions) if partitions is not None else None,
                "tasks": list(tasks) if tasks is not None else None,
                "data": own if args.data is not None else None,
                "control_split": args.control_split, "control_data": args.control_data,
                "dcr_sheet": args.dcr_sheet, "dcq_mode": args.dcq_mode, "likelihood": not args.no_likelihood,
                "limit": args.limit,
                **({"sample": benchmark_sample(args), "split_control": not args.no_split_control}
                   if args.tasks is not None else {}),
                **({"control_items": args.control_items} if getattr(args, "control_items", None) is not None else {}),
                **({"methods": list(name_list(args.methods, "--methods") or ())} if args.methods is not None else {}),
                **({"reference_model": reference.spec.spec} if reference is not None else {}),
                **({"reorderings": args.reorderings} if args.reorderings is not None else {}),
                **({REFERENCE_ITEMS_KEY: args.reference_items} if args.reference_items is not None else {}),
                **({"dcr_per_subtask": True} if args.dcr_per_subtask else {}),
                **({"per_subtask": True} if per_subtask(args) else {})}
    check_same_audit(args.output_path, identity, label, spec.backend, spec.model_args, optional=FLAGGED_IDENTITY_KEYS)
    return identity, spec, reference


# The identity's keys recorded only when their flag is given (check_same_audit: any other is always recorded).
FLAGGED_IDENTITY_KEYS = ("methods", "reference_model", "reorderings", REFERENCE_ITEMS_KEY, "dcr_per_subtask",
                         "per_subtask")


def per_subtask(args: argparse.Namespace) -> bool:
    """``--per-subtask`` (audit's; ``demo``, which takes no --tasks, has no such flag)."""
    return bool(getattr(args, "per_subtask", False))


def benchmark_sample(args: argparse.Namespace) -> int:
    """``--sample``, or the validation study's partition size when it is not given."""
    return BENCHMARK_SAMPLE if args.sample is None else args.sample


def audit_one(model: ModelSpec, label: str, out: Path, settings: AuditSettings, *,
              judge_model: str | None = None, loaded: LoadedBenchmarks | None = None) -> None:
    """Audit one model (its parsed spec), then (with ``judge_model``) run Judge B over its Time Travel samples;
    ``loaded``: the ``--tasks`` benchmarks :func:`task_settings` built (used as they are)."""
    run = run_model(model, label, out, settings, loaded)
    print(f"audited {label} in {run.seconds} s -> {out / run.run_dir}")
    for task, caveats in ((run.benchmark_scoring or {}).get("caveats") or {}).items():
        for caveat in caveats:
            print(f"caveat: benchmark {task}: {caveat}")
    if settings.limit is not None:
        print(f"caveat: --limit {settings.limit} audits lm-eval's first instances, not each method's sample: a smoke "
              "run; its verdicts are marked as such in the report")
    if judge_model:
        for path in judge_output_path(out / run.run_dir, judge_model, device=settings.device,
                                      chat_template=settings.apply_chat_template is not False):
            print(f"wrote {path}")


def write_report(out: Path) -> None:
    written = report.write_report(out)
    print(f"report: {written.html_path}\n        {written.md_path}")


def default_label(model: str | None) -> str:
    """A folder-safe name: the model folder's name, a sanitised spec, or "default"."""
    import re

    if not model:
        return "default"
    name = Path(model).name if Path(model).exists() else model
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "model"


def own_data_card(args: argparse.Namespace) -> Path:
    """The partition card of ``--data`` and its column flags, written under the audit directory."""
    needed = [flag for flag, value in (("--split", args.split), ("--name", args.name),
                                       ("--text-field", args.text_field)) if not value]
    if needed:
        raise ContamError(f"--data needs {', '.join(needed)}", field=needed[0])
    own = OwnData(source=args.data, split=args.split, name=args.name, text_field=args.text_field,
                  second_field=args.second_field, label_field=args.label_field,
                  label_names=tuple(name.strip() for name in args.label_names.split(",")) if args.label_names else (),
                  task_type=args.task_type, hf_name=args.hf_name,
                  control=Control("file", args.control_data, args.control_split)
                  if args.control_data is not None or args.control_split is not None else Control())
    return write_card(own, args.output_path)


def _main(args: argparse.Namespace) -> int:
    label = args.label or default_label(args.model)
    identity, spec, reference = check_args(args, label)
    settings = replace(settings_from_args(args), quiz_option_generator=args.dcq_generator,
                       reference=reference)
    hint = reference.line() if reference is not None else suggestion(spec)
    if hint:
        print(hint)
    derived = derived_benchmarks(args) if args.tasks is not None else None  # the last check: it writes nothing
    # The identity goes first: an interrupted first run leaves it beside its files, so no other audit mixes with them.
    with claimed(args.output_path, identity, label, spec.backend, spec.model_args):
        loaded = None
        if derived is not None:
            settings, loaded = task_settings(args, settings, derived)
        if args.data:
            card = own_data_card(args)
            print(f"partition card: {card}")
            listed = settings.partitions if args.partitions else ()
            settings = replace(settings, partitions=(*listed, str(card)))
        audit_one(spec, label, args.output_path, settings, judge_model=args.judge_model, loaded=loaded)
    if not args.no_report:
        write_report(args.output_path)
    for line in report.partition_statements(args.output_path):
        print(line)
    if args.tasks is not None:
        for summary in group_summaries(args.output_path):
            print(summary.line())
    return 0


def derived_benchmarks(args: argparse.Namespace) -> DerivedBenchmarks:
    """The ``--tasks`` benchmarks loaded, rendered and their partitions (and controls) derived, writing nothing: every
    check of the tasks, groups and controls runs here, before the audit's first write."""
    if args.data:
        raise ContamError("give --tasks or --data, not both (each takes its own --control-split)", field="--tasks")
    return derive_benchmark_partitions(list(name_list(args.tasks, "--tasks") or ()), args.include_path,
                                       requested_control(args.control_split, args.control_data,
                                                         task_split=not args.no_split_control),
                                       sample=benchmark_sample(args) or None, per_subtask=per_subtask(args))


def task_settings(args: argparse.Namespace, settings: AuditSettings,
                  derived: DerivedBenchmarks) -> tuple[AuditSettings, LoadedBenchmarks]:
    """The audit of ``--tasks``: every (sub)task's derived partition card (written under the audit directory), and
    the benchmarks as they were built and rendered, for the rest of the audit."""
    names = list(name_list(args.tasks, "--tasks") or ())
    written = write_benchmark_partitions(derived, args.output_path)
    for card in written.cards:
        print(f"partition card: {card}")
    for statement in written.control_statements:
        print(statement)
    listed = settings.partitions if args.partitions else ()
    return replace(settings, partitions=(*listed, *written.cards), benchmark_tasks=tuple(dict.fromkeys(names)),
                   task_groups=written.groups), written.loaded
