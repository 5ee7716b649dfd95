"""The audit: task planning, injection corpus rows, an end-to-end audit on the tiny model, and resuming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_contam import harness
from lm_eval_contam.audit.job import AuditSettings, partition_tasks, run_model
from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.contaminate import audited_rows, contaminant_texts
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.registry import AuditedModel, registered_methods
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.models.tiny_model import build_tiny_model

# The request-count tests count Time Travel and DCQ calls; every other registered method has its own tests.
SETTINGS = AuditSettings(partitions=("toy_news:train",), max_gen_toks=6, batch_size=1, device="cpu",
                         skip_methods=tuple(spec.name for spec in registered_methods()
                                            if spec.name not in ("timetravel", "dcq")))
# The families whose task names these tests spell out; a method added later has tests of its own.
NAMED = ("timetravel", "dcq", "dcr", "likelihood", "incontext", "optionorder")


def registry_tasks(name: str, model: AuditedModel, skip_methods: tuple[str, ...] = ()) -> list[str]:
    """What the registry says a partition's audit runs: every registered method's tasks, in report order."""
    partition = Partition.parse(name)
    return [task for spec in registered_methods() if spec.name not in skip_methods
            for task in spec.task_names(partition, model)]


def of(tasks: list[str], *families: str) -> list[str]:
    return [task for task in tasks if task.split("_", 1)[0] in families]


def test_partition_tasks_follow_the_task_naming() -> None:
    tasks = partition_tasks("toy_news:train", ["loglikelihood"])
    assert tasks == registry_tasks("toy_news:train", AuditedModel(chat=True, plain_text=True))
    assert of(tasks, *NAMED) == [
        "timetravel_toy_news_train", "timetravel_toy_news_train_completion", "dcq_toy_news_train_ll",
        "likelihood_toy_news_train", "likelihood_toy_news_train_lift", "likelihood_toy_news_train_options",
        "incontext_toy_news_train"]
    base = partition_tasks("ag_news:test", ["loglikelihood", "generate"], chat=False, skip_methods=("likelihood",))
    assert base == registry_tasks("ag_news:test", AuditedModel(False, True, ("loglikelihood", "generate")),
                                  ("likelihood",))
    assert of(base, *NAMED) == [
        "timetravel_ag_news_test_completion", "dcq_ag_news_test_ll", "dcq_ag_news_test", "incontext_ag_news_test"]
    # A chat API can neither continue plain text nor score prompts: instruct Time Travel and the quiz only.
    for modes in (["generate"], ["loglikelihood", "generate"]):
        api = partition_tasks("ag_news:test", modes, plain_text=False)
        assert api == registry_tasks("ag_news:test", AuditedModel(True, False, tuple(modes)))
        assert of(api, *NAMED) == ["timetravel_ag_news_test", "dcq_ag_news_test"]
    with pytest.raises(ContamError, match="unknown DCQ mode"):
        partition_tasks("toy_news:train", ["vibes"])
    with pytest.raises(ContamError):
        partition_tasks("toy_news", ["loglikelihood"])


def test_audited_rows_are_the_union_of_both_samples_and_deterministic() -> None:
    from lm_eval_contam.kit.instances import sample_indices
    from lm_eval_contam.methods.timetravel.instances import sample_docs

    partition = Partition.parse("toy_news:train")
    rows = partition.rows()
    assert audited_rows(partition, rows) == list(range(len(rows)))  # small partitions: every row
    big = [{"text": f"Sentence number {i} is here. And a second sentence {i} follows it.", "label": i % 4}
           for i in range(1000)]
    ag_news = Partition.parse("ag_news:train")
    chosen = audited_rows(ag_news, big)
    assert chosen == audited_rows(ag_news, big)
    assert 100 <= len(chosen) <= 110  # DCQ's 100 plus Time Travel's 10 (overlap possible)
    # Exactly what the two tasks sample with their own defaults (seed 0, 10 and 100 instances).
    assert chosen == sorted({doc["row_index"] for doc in sample_docs(big, ag_news, num_instances=10, seed=0)}
                            | set(sample_indices(ag_news, big, 100, seed=0)))


def test_dcr_injection_blocks() -> None:
    ag_news = Partition.parse("ag_news:train")
    rows = [{"text": f"story {i}", "label": i % 4} for i in range(10)]
    l4 = contaminant_texts(ag_news, rows, "dcr-l4")
    assert len(l4) == 2  # blocks of 8 items
    assert l4[0].splitlines()[:3] == [
        "This is the data from AG News, which is a benchmark for text classification task.",
        "story 0 is World", "story 1 is Sports"]
    assert contaminant_texts(ag_news, rows[:1], "dcr-l3")[0].endswith("\nstory 0")
    with pytest.raises(ContamError, match="classification and question answering"):
        contaminant_texts(Partition.parse("xsum:test"), [{"summary": "s", "document": "d"}], "dcr-l4")
    with pytest.raises(ContamError, match="outside"):
        contaminant_texts(ag_news, [{"text": "x", "label": 9}], "dcr-l4")


class _CountingCalls:
    """Counts the HF model's generate and forward calls; can fail after ``fail_after`` calls (an interruption)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail_after: int | None = None) -> None:
        from lm_eval.models.huggingface import HFLM

        self.calls = 0
        for name in ("_model_generate", "_model_call"):
            original = getattr(HFLM, name)
            monkeypatch.setattr(HFLM, name, self._wrap(original, fail_after))

    def _wrap(self, original, fail_after):
        def counted(model, *args, **kwargs):
            if fail_after is not None and self.calls >= fail_after:
                raise KeyboardInterrupt("simulated interruption")
            result = original(model, *args, **kwargs)
            self.calls += 1
            return result

        return counted


def _results(run_dir: Path) -> dict:
    files = sorted(run_dir.rglob("results_*.json"))
    return json.loads(files[-1].read_text())


def test_generation_cap_goes_to_the_methods_that_ask_for_it_only() -> None:
    names = ["timetravel_toy_news_train", "dcq_toy_news_train", "timetravel_toy_news_train_completion"]
    capped = harness.generation_capped_tasks(harness.task_manager(), names, 3)
    # DCQ's generated one-letter answers keep their own setting: only Time Travel asks for the cap.
    assert list(capped) == ["timetravel_toy_news_train", "timetravel_toy_news_train_completion"]
    assert [task.config.generation_kwargs["max_gen_toks"] for task in capped.values()] == [3, 3]


def test_audit_writes_lm_eval_results_and_audit_json(tiny_model_dir: Path, tmp_path: Path, monkeypatch) -> None:
    counter = _CountingCalls(monkeypatch)
    run = run_model(ModelSpec.parse(str(tiny_model_dir)), "tiny", tmp_path, SETTINGS)
    assert run.tasks == ("timetravel_toy_news_train", "timetravel_toy_news_train_completion", "dcq_toy_news_train_ll")
    results = _results(tmp_path / run.run_dir)["results"]
    assert set(results) == set(run.tasks)
    assert 0.0 <= results["timetravel_toy_news_train"]["alg1_pvalue,none"] <= 1.0
    assert 0.0 <= results["dcq_toy_news_train_ll"]["dcq_pvalue,none"] <= 1.0
    # 12 instances: 24 Time Travel generations per prompt style (a chat model gets both), 12 x 5 quizzes at one
    # forward pass each.
    assert counter.calls == 2 * 24 + 60
    audit = json.loads((tmp_path / "audit.json").read_text())
    assert [m["label"] for m in audit["models"]] == ["tiny"]
    assert audit["partitions"] == ["toy_news:train"] and audit["models"][0]["injection"] is None
    samples = list((tmp_path / run.run_dir).rglob("samples_timetravel_toy_news_train_*.jsonl"))
    generated = [json.loads(line)["resps"][0][0] for line in samples[0].read_text().splitlines()]
    assert len(generated) == 12


def test_interrupted_audit_resumes_from_the_request_cache(tiny_model_dir: Path, tmp_path: Path, monkeypatch) -> None:
    with monkeypatch.context() as patch:
        interrupted = _CountingCalls(patch, fail_after=30)
        with pytest.raises(KeyboardInterrupt):
            run_model(ModelSpec.parse(str(tiny_model_dir)), "tiny", tmp_path, SETTINGS)
    assert interrupted.calls == 30 and not list(tmp_path.rglob("results_*.json"))
    resumed = _CountingCalls(monkeypatch)
    run_model(ModelSpec.parse(str(tiny_model_dir)), "tiny", tmp_path, SETTINGS)
    assert resumed.calls == 2 * 24 + 60 - 30  # nothing done before the interruption is recomputed
    again = _CountingCalls(monkeypatch)
    run_model(ModelSpec.parse(str(tiny_model_dir)), "tiny", tmp_path, SETTINGS)
    assert again.calls == 0


def test_the_cli_parses_the_model_spec_once_and_loads_its_tokenizer_once(tiny_model_dir: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's check, the chat-template test, the window before the run and the count of cut docs after it share
    the one spec the CLI parsed, and its one tokenizer."""
    from lm_eval_contam.lmeval import generation
    parsed: list[str] = []
    loads: list[str] = []
    parse, load = ModelSpec.__dict__["parse"].__func__, generation.load_local_tokenizer
    monkeypatch.setattr(ModelSpec, "parse", classmethod(
        lambda cls, spec, **options: parsed.append(spec) or parse(cls, spec, **options)))
    monkeypatch.setattr(generation, "load_local_tokenizer",
                        lambda backend, arguments: loads.append(str(arguments["pretrained"])) or load(backend, arguments))
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--partitions", "toy_news:train", "--methods", "dcq",
                     "--limit", "2", "--device", "cpu", "--no-report", "--output_path", str(tmp_path)]) == 0
    assert parsed == [str(tiny_model_dir)] and loads == [str(tiny_model_dir)]
    results = _results(tmp_path / "runs" / tiny_model_dir.name)["results"]
    assert results["dcq_toy_news_train_ll"]["truncated_docs,none"] == 0  # counted with the same tokenizer


def test_audit_rejects_bad_labels_and_unknown_partitions(tiny_model_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ContamError, match="label"):
        run_model(ModelSpec.parse(str(tiny_model_dir)), "../x", tmp_path, SETTINGS)
    with pytest.raises(ContamError, match="unknown dataset|known"):
        run_model(ModelSpec.parse(str(tiny_model_dir)), "tiny", tmp_path, AuditSettings(partitions=("nope:train",)))


@pytest.fixture(scope="module")
def toy_news_memoriser(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny base model contaminated through the CLI with Toy News train (no filler, many epochs)."""
    texts = []
    for name in ("toy_news:train", "toy_news:test"):
        partition = Partition.parse(name)
        texts += contaminant_texts(partition, partition.rows(), "timetravel")
    base = build_tiny_model(tmp_path_factory.mktemp("tt_base"), texts * 4, vocab_size=600, n_layer=4, n_embd=128)
    out = tmp_path_factory.mktemp("contaminated")
    assert cli_main(["contaminate", "--model", str(base), "--partition", "toy_news:train", "--out", str(out),
                     "--epochs", "80", "--learning-rate", "3e-3", "--share", "1.0", "--batch-size", "2",
                     "--max-length", "128", "--validation-docs", "2"]) == 0
    return out


def test_contaminate_writes_a_manifest_of_what_was_injected(toy_news_memoriser: Path) -> None:
    manifest = json.loads((toy_news_memoriser / "contamination_manifest.json").read_text())
    assert manifest["injected"]["sources"] == [{"partition": "toy_news:train", "format": "timetravel", "rows": list(range(12))}]
    assert manifest["injected"]["num_texts"] == 12 and manifest["corpus"]["contaminant_share"] == 1.0
    assert manifest["settings"]["epochs"] == 80 and manifest["settings"]["learning_rate"] == 3e-3
    assert len(manifest["loss"]["eval_loss"]) == 81 and manifest["loss"]["train_loss"][-1] < manifest["loss"]["train_loss"][0] / 5


def test_audit_flags_the_injected_partition_and_not_the_unseen_one(toy_news_memoriser: Path, tmp_path: Path) -> None:
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    assert cli_main(["audit", "--model", str(toy_news_memoriser), "--label", "contaminated",
                     "--partitions", "toy_news:train,toy_news:test", "--no-chat-template", "--max_gen_toks", "40",
                     "--batch_size", "12", "--output_path", str(tmp_path)]) == 0
    found = {(v.partition, v.test): v for v in collect(load_run(tmp_path))}
    train, test = found[("Toy News train", "tt_alg2_judge_a")], found[("Toy News test", "tt_alg2_judge_a")]
    print(f"\ninjected: {train.evidence.summary()}; unseen: {test.evidence.summary()}")
    assert train.flagged and train.evidence.exact_matches + train.evidence.near_exact_matches >= 2
    assert not test.flagged and not found[("Toy News test", "tt_alg1")].flagged
    audit = json.loads((tmp_path / "audit.json").read_text())
    assert audit["models"][0]["injection"]["settings"]["epochs"] == 80
    report = (tmp_path / "report.html").read_text()
    assert "Toy News" in report and "<svg" in report


def test_demo_runs_end_to_end_and_says_what_was_flagged(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    assert cli_main(["demo", "--model", str(tiny_model_dir), "--epochs", "1", "--max_gen_toks", "4",
                     "--output_path", str(tmp_path)]) == 0
    audit = json.loads((tmp_path / "audit.json").read_text())
    assert [m["label"] for m in audit["models"]] == ["clean", "contaminated"]
    assert audit["partitions"] == ["toy_news:train", "toy_news:test"]
    injection = audit["models"][1]["injection"]
    assert injection["settings"]["learning_rate"] == 3e-4 and injection["settings"]["share"] == 0.5
    assert injection["injected"]["sources"][0]["rows"] == list(range(12))
    out = capsys.readouterr().out
    assert "contaminated / Toy News train (injected):" in out and "clean / Toy News test (not injected):" in out
    assert (tmp_path / "report.html").is_file() and (tmp_path / "report.md").is_file()


def test_chat_model_audit_runs_both_styles_and_flags_only_the_injected_partition(toy_news_memoriser: Path,
                                                                                  tmp_path: Path) -> None:
    """A chat-templated model injected in plain text: the audit's completion style catches what instruct prompts miss."""
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    assert cli_main(["audit", "--model", str(toy_news_memoriser), "--label", "chat",
                     "--partitions", "toy_news:train,toy_news:test", "--max_gen_toks", "40",
                     "--batch_size", "12", "--output_path", str(tmp_path), "--no-report"]) == 0
    found = collect(load_run(tmp_path))
    flagged = {(v.partition, v.test, v.variant) for v in found if v.flagged}
    assert ("Toy News train", "tt_alg2_judge_a", "completion") in flagged
    assert not [key for key in flagged if key[0] == "Toy News test"]
    assert {v.variant for v in found if v.test == "tt_alg1"} == {"instruct", "completion"}
    assert [v.test for v in found if v.partition == "Toy News train"].count("tt_styles_combined") == 1
    # The likelihood modes (ours) run in the same audit, each partition against its sibling split.
    likelihood = {(v.partition, v.test): v for v in found if v.family == "likelihood"}
    assert {partition for partition, _ in likelihood} == {"Toy News train", "Toy News test"}
    assert all(0.0 <= v.pvalue <= 1.0 for v in likelihood.values())
