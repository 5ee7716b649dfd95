"""A method is one registry entry: a toy method registered from the test directory reaches the audit plan, the
own-data task YAMLs, the verdicts and the report with no core module edited; a name registers once."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
import yaml

from lm_eval_contam.audit import AuditSettings, plan_audit
from lm_eval_contam.catalogue import BUILTIN_METHODS
from lm_eval_contam.errors import ContamError
from lm_eval_contam.method_verdict import Verdict
from lm_eval_contam.own_data import write_task_configs
from lm_eval_contam.partitions import Partition, resolve_partition
from lm_eval_contam.registry import (
    AuditedModel,
    ExplicitInput,
    MethodSpec,
    PlannedTasks,
    RenderTarget,
    method_of,
    register_method,
    registered_methods,
    unregister_method,
)
from lm_eval_contam.report import write_report
from lm_eval_contam.rundir import ModelResults, load_run
from lm_eval_contam.verdict import collect

TOY = "toymethod"
TEMPLATE = Path(__file__).with_name("toy_method") / "_template_yaml"


class ToyEvidence:
    def __init__(self, perplexity: float) -> None:
        self.perplexity = perplexity

    def facts(self) -> list[tuple[str, str]]:
        return [("word perplexity", f"{self.perplexity:g}")]

    def summary(self) -> str:
        return f"perplexity {self.perplexity:g}"


def toy_task_names(partition: Partition, model: AuditedModel) -> list[str]:
    return [partition.task_name(TOY)] if model.plain_text else []


def toy_task_configs(partition: Partition, target: RenderTarget) -> dict[str, str]:
    config = {"include": str(TEMPLATE), "task": partition.task_name(TOY), "test_split": partition.split,
              "metadata": {"method": TOY, **partition.dataset.task_metadata()}}
    return {partition.task_name(TOY): yaml.safe_dump(config, sort_keys=False)}


def toy_verdicts(model: ModelResults) -> list[Verdict]:
    found = []
    for task in model.results.get("results") or {}:
        if model.metadata(task).get("method") != TOY:
            continue
        perplexity = float(model.row(task)["word_perplexity,none"])
        found.append(Verdict(model=model.label, partition="Toy News train", family=TOY, method="toy_perplexity",
                             title="Toy perplexity test", task=task, flagged=perplexity < 10, statistic=perplexity,
                             pvalue=0.5, confidence_interval=None, n=12, null="the toy never flags by chance",
                             rule="flags a perplexity below 10", evidence=ToyEvidence(perplexity)))
    return found


def toy_html(verdicts: Sequence[Verdict], anchor: Callable[[Verdict], str]) -> str:
    return "".join(f'<h4 id="{anchor(v)}">Toy section: {v.evidence.summary()}</h4>' for v in verdicts)


def toy_markdown(verdicts: Sequence[Verdict]) -> list[str]:
    return [f"#### Toy section: {v.evidence.summary()}" for v in verdicts]


def toy_planned(wordlist: str) -> PlannedTasks:
    return PlannedTasks(tasks=(f"toymethod_{wordlist}",), benchmark_tasks=("toy_benchmark",))


TOY_SPEC = MethodSpec(name=TOY, title="Toy method", order=99, needs=frozenset({"logprobs"}),
                      task_names=toy_task_names, render_task_configs=toy_task_configs, verdicts=toy_verdicts,
                      render_html=toy_html, render_markdown=toy_markdown, rate_keys=("toy_perplexity",),
                      explicit_input=ExplicitInput(what="a toy word list", plan=toy_planned))


@pytest.fixture
def toy() -> Iterator[MethodSpec]:
    register_method(TOY_SPEC)
    yield TOY_SPEC
    unregister_method(TOY)


def test_a_name_registers_once(toy) -> None:
    with pytest.raises(ContamError, match="'toymethod' is already registered"):
        register_method(toy)
    with pytest.raises(ContamError, match="'timetravel' is already registered"):
        register_method(BUILTIN_METHODS[0])
    assert method_of(TOY) is toy
    with pytest.raises(ContamError, match="no registered method 'nosuchmethod'"):
        method_of("nosuchmethod")


def test_builtin_methods_in_report_order() -> None:
    assert [spec.name for spec in registered_methods()] == ["timetravel", "dcq", "dcr", "likelihood", "incontext",
                                                            "optionorder", "pairing"]


def test_every_shipped_rate_belongs_to_a_registered_method() -> None:
    keys = ({key for spec in registered_methods() for key in spec.rate_keys}
            | {"partition_combined", "partition_combined_without_control"})
    for name in ("null_rates.json", "validation_rates.json"):
        document = json.loads((Path(__file__).parent.parent / "lm_eval_contam" / name).read_text())
        assert set(document["methods"]) <= keys, name


def test_toy_method_in_plan_task_configs_verdicts_and_report(toy, tmp_path) -> None:
    plan = plan_audit(AuditSettings(partitions=("toy_news:train",)))
    assert plan.tasks[-1] == "toymethod_toy_news_train"
    assert plan_audit(AuditSettings(partitions=("toy_news:train",)), plain_text=False).tasks[-1] != plan.tasks[-1]

    own = Partition.from_card_fields({"dataset_name": "Toy Notes", "split": "train", "text_field": "text",
                                      "data_files": {"train": str(tmp_path / "notes.jsonl")}}, tmp_path / "card.yaml")
    written = write_task_configs(own, tmp_path / "audit")
    assert (written / "toymethod_toy_notes_train.yaml").is_file()

    model = tmp_path / "run" / "m"
    model.mkdir(parents=True)
    task = "toymethod_toy_news_train"
    results = {"results": {task: {"word_perplexity,none": 4.0}},
               "configs": {task: {"metadata": {"method": TOY, **resolve_partition("toy_news:train").dataset.task_metadata()}}}}
    (model / "results_2024-01-01T00-00-00.json").write_text(json.dumps(results))
    (verdict,) = collect(load_run(tmp_path / "run"))
    assert (verdict.family, verdict.method, verdict.flagged) == (TOY, "toy_perplexity", True)

    report = write_report(tmp_path / "run", tmp_path / "report")
    assert "Toy section: perplexity 4" in report.html_path.read_text()
    assert "#### Toy section: perplexity 4" in report.md_path.read_text()


def test_a_methods_own_input_adds_its_tasks_and_benchmarks_to_the_plan(toy) -> None:
    plan = plan_audit(AuditSettings(partitions=("toy_news:train",), method_inputs=((TOY, "words"),),
                                    benchmark_tasks=("arc_easy",)))
    assert plan.tasks[-3:] == ("toymethod_words", "toy_benchmark", "arc_easy")
    assert plan.method_inputs == {TOY: PlannedTasks(("toymethod_words",), ("toy_benchmark",))}
    assert plan.scored_benchmarks == ["arc_easy", "toy_benchmark"] and plan.needs_builtins
    assert not plan_audit(AuditSettings(partitions=("toy_news:train",))).needs_builtins
    with pytest.raises(ContamError, match="^field 'partitions': nothing to audit: give partitions and/or a DCR sheet "
                                          "and/or a toy word list$"):
        plan_audit(AuditSettings(partitions=()))
    with pytest.raises(ContamError, match="method 'timetravel' takes no input of its own"):
        plan_audit(AuditSettings(partitions=(), method_inputs=(("timetravel", "words"),)))


def test_dcr_sheet_is_dcrs_own_input_its_group_and_the_benchmark_it_adjusts() -> None:
    plan = plan_audit(AuditSettings(partitions=(), method_inputs=(("dcr", "toy_sentiment"),)))
    assert plan.tasks == ("dcr_toy_sentiment", "contam_toy_sentiment")
    assert plan.scored_benchmarks == ["contam_toy_sentiment"] and plan.needs_builtins
