"""The validation study's bookkeeping: strengths parsing and detection / false-positive rates from verdicts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.registry import registered_methods

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "validation_study.py"
spec = importlib.util.spec_from_file_location("validation_study", SCRIPT)
study = importlib.util.module_from_spec(spec)
spec.loader.exec_module(study)


def test_strengths_parse_and_label() -> None:
    papers, strong = study.parse_strengths("5e-5:3:0.15,3e-4:6:0.5")
    assert (papers.learning_rate, papers.epochs, papers.share, papers.batch_size) == (5e-5, 3, 0.15, 1)
    assert study.strength_label(strong) == "lr0.0003_ep6_share0.5"
    with pytest.raises(ContamError, match="lr:epochs:share"):
        study.parse_strengths("5e-5:3")


def _verdict(model: str, dataset: str, split: str, method: str, flagged: bool) -> Verdict:
    return Verdict(model=model, partition=f"{dataset} {split}", family=method.partition("_")[0], test=method,
                   title=method, task="t", flagged=flagged, statistic=None, pvalue=None, confidence_interval=None,
                   n=None, null="", rule="", evidence=None)


def test_rates_split_injected_from_held_out_partitions() -> None:
    verdicts = [
        _verdict("strong", "Toy News", "train", "tt_alg1", True),
        _verdict("strong", "Toy Reviews", "train", "tt_alg1", False),
        _verdict("strong", "Toy News", "test", "tt_alg1", True),
        _verdict("strong", "Toy Reviews", "test", "tt_alg1", False),
        _verdict("strong", "Toy Pairs", "test", "tt_alg1", True),  # in neither list: ignored
        _verdict("clean", "Toy News", "train", "dcq_loglikelihood", False),
    ]
    rates = study.rates(verdicts, ["toy_news:train", "toy_reviews:train"], ["toy_news:test", "toy_reviews:test"])
    assert rates["strong"]["tt_alg1"] == {"injected": 0.5, "held_out": 0.5, "n_injected": 2, "n_held_out": 2}
    assert rates["clean"]["dcq_loglikelihood"]["injected"] == 0.0
    assert rates["clean"]["dcq_loglikelihood"]["n_held_out"] == 0


def test_papers_strength_study_runs_resumes_and_ships_rates(tiny_model_dir: Path, tmp_path: Path) -> None:
    """The study's pipeline at toy size: both shapes injected, every partition scored on both models (the fresh
    natural-text partitions on the clean one only), the reference pass on the clean model, the injected one and the
    filler-only fine-tune (both read against the clean one), tallied per shape, with and without a control or a
    reference, loaded as shipped."""
    import json

    from lm_eval_contam.nullstudy.validation import (
        PRIOR_RATES_FILE,
        ValidationSettings,
        collect,
        compute_seconds,
        expected_runs,
        markdown_table,
        prepare,
        rates_document,
        run_validation,
        scored_runs,
    )
    from lm_eval_contam.verdicts.detection_rates import clean_bill, measured_detection, parse_detection
    from lm_eval_contam.verdicts.verdict import partition_verdicts

    settings = ValidationSettings(partitions=1, mc_partitions=1, rows_per_partition=10, epochs=1, learning_rate=1e-3,
                                  share=0.5, max_gen_toks=2, batch_size=10, mixed_precision="no", fresh_per_shape=1)
    study_dir = tmp_path / "study"
    passes = ("likelihood", "reference", "control_reference")
    labelled = run_validation(settings, study_dir, str(tiny_model_dir), passes=passes, progress=False)
    runs = sorted(path.relative_to(study_dir / "runs").as_posix() for path in (study_dir / "runs").glob("*/*")
                  if path.is_dir() and not path.name.endswith(".cache"))
    assert runs == ["author/reference_00", "clean/control_reference_00", "clean/likelihood_00", "clean/reference_00",
                    "filler/control_reference_00", "filler/reference_00", "injected/control_reference_00",
                    "injected/likelihood_00", "injected/reference_00"]
    partitions, _, _ = prepare(settings, study_dir)
    assert [(p.partition.label, p.role, p.shape, p.clean_only) for p in partitions] == [
        ("Quick Kettle 0 train", "injected", "free text", False), ("Quick Kettle 0 test", "sibling", "free text", False),
        ("Quick Bridge Quiz 0 train", "injected", "multiple choice", False),
        ("Quick Bridge Quiz 0 test", "sibling", "multiple choice", False),
        ("Fresh Council a", "unseen", "fresh free text", True), ("Fresh Arith Quiz a", "unseen", "fresh multiple choice", True),
        ("Fresh Council b", "unseen", "fresh free text", True), ("Fresh Arith Quiz b", "unseen", "fresh multiple choice", True)]
    assert scored_runs(study_dir)["likelihood"] == expected_runs(partitions)["likelihood"] == 2
    assert scored_runs(study_dir)["reference"] == expected_runs(partitions)["reference"] == 4
    filler = json.loads((study_dir / "filler_model" / "contamination_manifest.json").read_text())
    assert filler["injected"]["num_texts"] == 0 and filler["injected"]["filler_only"]
    assert filler["corpus"]["contaminant_share"] == 0 and filler["settings"] == json.loads(
        (study_dir / "model" / "contamination_manifest.json").read_text())["settings"]
    author = json.loads((study_dir / "author_model" / "contamination_manifest.json").read_text())
    assert [source["partition"] for source in author["injected"]["sources"]] == ["free_council_a", "mc_arith_a"]
    assert author["settings"]["share"] == 0.5 and author["settings"]["learning_rate"] == 1e-3
    manifest = json.loads((study_dir / "model" / "contamination_manifest.json").read_text())
    assert [source["format"] for source in manifest["injected"]["sources"]] == ["timetravel", "lm-eval multiple choice"]
    assert manifest["settings"]["learning_rate"] == 1e-3 and manifest["corpus"]["contaminant_share"] <= 0.5
    # Every partition gets the control-free tests (option order on multiple choice only) and the likelihood modes.
    tests = {(v.model, v.partition, v.test) for v, _, _ in labelled}
    assert ("injected", "Quick Bridge Quiz 0 train", "option_order") in tests
    assert ("injected", "Quick Kettle 0 train", "option_order") not in tests
    # On u against the clean model: the fine-tunes' verdicts; the clean model has no reference.
    assert {("injected", "Quick Bridge Quiz 0 train", "option_order_reference"),
            ("filler", "Fresh Arith Quiz b", "option_order_reference"),
            ("filler", "Fresh Council b", "pairing_reference"),
            ("author", "Fresh Arith Quiz b", "option_order_reference"),
            ("author", "Fresh Council b", "pairing_reference")} <= tests
    # The author fine-tune audits only the split it was not trained on, in the passes that need no control.
    assert {v.partition for v, _, _ in labelled if v.model == "author"} == {"Fresh Council b", "Fresh Arith Quiz b"}
    assert {role for v, role, _ in labelled if v.model == "author"} == {"author"}
    assert not {v.test for v, _, _ in labelled if v.model == "author"} & {"likelihood_control_reference"}
    assert not {method for model, _, method in tests if model == "clean"} & {"option_order_reference",
                                                                              "pairing_reference",
                                                                              "likelihood_control_reference"}
    # The control mode on u (the control-reference pass) on both fine-tunes; its tests without a reference counted
    # once where the likelihood pass scored the task too.
    assert {("injected", "Quick Kettle 0 train", "likelihood_control_reference"),
            ("filler", "Fresh Council b", "likelihood_control_reference"),
            ("filler", "Quick Bridge Quiz 0 test", "likelihood_control")} <= tests
    counted = [(v.model, v.partition, v.test) for v, _, _ in labelled if v.test == "likelihood_control"]
    assert len(counted) == len(set(counted)) == 8 + 4 + 8
    assert {("clean", "Fresh Arith Quiz b", method) for method in ("option_order", "incontext_twin", "likelihood_lift",
                                                                   "likelihood_control")} <= tests
    assert not {v.partition for v, _, _ in labelled if v.model == "injected"} & {"Fresh Council a", "Fresh Arith Quiz a"}
    # Each partition's verdict with its control and without one; the latter leaves out every controlled test.
    combined = [(v.model, v.partition, v.test, role, shape) for v, role, shape in labelled if v.family == "combined"]
    assert ("injected", "Quick Bridge Quiz 0 test", "partition_combined_without_control", "sibling",
            "multiple choice") in combined
    # clean: 8 partitions x (control, neither); injected and filler: 4 and 8 x (control, control and reference
    # (the control mode on u drives it), neither), and the verdict with a reference on their 2 and 4 multiple-choice
    # partitions; author: 2 x neither, 1 with a reference. A free-text partition's verdict is never the one with a
    # reference and no control here: its tests on u (pairing, sentence order) are over their level in the shipped
    # rates, so none drives it.
    assert len(combined) == 2 * 8 + (3 * 4 + 2) + (3 * 8 + 4) + (2 + 1)
    assert ("injected", "Quick Kettle 0 train", "partition_combined_with_control_and_reference", "injected",
            "free text") in combined
    assert not [row for row in combined if row[2] == "partition_combined_with_reference" and "free text" in row[4]]
    without = next(v for v, _, _ in labelled if v.test == "partition_combined_without_control")
    assert not {t.test for t, _ in without.evidence.evidence} & {"likelihood_control", "likelihood_control_zlib"}

    def decisions(found: list) -> list:
        return [(v.model, v.partition, v.test, v.variant, v.flagged, role, shape) for v, role, shape in found]

    # A second call finds every step done and gives the same verdicts without training or scoring again.
    assert decisions(run_validation(settings, study_dir, str(tiny_model_dir), passes=passes,
                                    progress=False)) == decisions(labelled)
    collected, complete = collect(settings, study_dir, str(tiny_model_dir))
    assert complete == ["likelihood", "reference", "control_reference"] and decisions(collected) == decisions(labelled)

    prior = json.loads((study_dir / PRIOR_RATES_FILE).read_text())  # the rates shipped when the study began
    document = rates_document(labelled, command="cmd", date="2026-11-25", design=settings.design("tiny"),
                              scored=scored_runs(study_dir), combined_passes=complete,
                              compute_seconds=compute_seconds(study_dir), prior=prior)
    assert document["passes"]["likelihood"]["model_partition_runs"] == 2 and document["compute_seconds"] > 0
    entry = document["methods"]["partition_combined_without_control"]
    assert entry["detection"]["k"] == 2 and entry["false_positive_held_out"]["k"] == 2
    assert entry["false_positive_clean"]["k"] == 8  # 4 study partitions + 4 fresh ones
    assert entry["by_shape"]["multiple choice"]["detection"]["k"] == 1
    assert entry["by_shape"]["fresh multiple choice"]["false_positive_clean"]["k"] == 2
    assert document["methods"]["option_order"]["false_positive_clean"]["k"] == 4  # multiple-choice partitions only
    on_u = document["methods"]["option_order_reference"]
    assert on_u["detection"]["k"] == 1 and on_u["false_positive_filler"]["k"] == 4 and "false_positive_clean" not in on_u
    assert on_u["false_positive_author"]["k"] == 1  # Fresh Arith Quiz b
    # The most instances each test was tested on (a control test counts both sides), beyond which an audit's verdict says
    # its rates were not measured; a combined verdict's n counts its tests and gets none.
    tested_on = max(v.n for v, _, _ in labelled if v.test == "option_order_reference")
    assert on_u["largest_n"] == tested_on and "largest_n" not in on_u["by_shape"]["multiple choice"]
    control = max(v.n for v, _, _ in labelled if v.test == "likelihood_control")
    assert document["methods"]["likelihood_control:control"]["largest_n"] == control > tested_on
    assert "largest_n" not in entry
    assert "| false positives (filler-only fine-tune) | false positives (author fine-tune) |" in markdown_table(document)
    # What this study did not score keeps the earlier study's entry, with its own command and date.
    carried, earlier = document["methods"]["tt_alg1:completion"], prior["methods"]["tt_alg1:completion"]
    assert carried["date"] == earlier.get("date", prior["date"]) and carried["detection"] == earlier["detection"]
    table = markdown_table(document)
    assert "| `partition_combined_without_control` |" in table and "… multiple choice only" in table
    assert f"— earlier study ({carried['date']})" in table
    rates = parse_detection(document)
    found = measured_detection(without, rates)
    assert found is not None and found.detection_by_shape["multiple choice"].k == 1
    rows = [row for row in partition_verdicts([v for v, _, _ in labelled if v.family != "combined"
                                               and v.model not in ("filler", "author")]) if not row.with_control]
    assert rows == []  # every study partition has its control (the sibling split)
    row = next(row for row in partition_verdicts([v for v, _, _ in labelled if v.family != "combined"
                                                  and v.test not in ("likelihood_control", "likelihood_control_zlib",
                                                                       "likelihood_control_reference",
                                                                       "option_order_reference",
                                                                       "option_order_reference_fixed_answer",
                                                                       "option_order_reference_residualised",
                                                                       "pairing_reference")])
               if row.partition == "Quick Bridge Quiz 0 train" and row.model == "injected")
    assert clean_bill(row, rates) == ("at the papers' injection strength this verdict (without a control) finds "
                                      f"{entry['by_shape']['multiple choice']['detection']['flagged']} of 1 injected "
                                      "multiple choice partitions of 10 items")


def test_a_study_folder_refuses_other_settings(tmp_path: Path) -> None:
    """Runs are named by position: a rerun of other settings on the same folder would reuse them for other partitions."""
    from lm_eval_contam.core.errors import ContamError
    from lm_eval_contam.nullstudy.validation import ValidationSettings, check_same_study

    check_same_study(ValidationSettings(), tmp_path)
    check_same_study(ValidationSettings(batch_size=2), tmp_path)  # the batch size changes no number
    # the precision follows the machine (bf16 where it is native): a study begun on one goes on on another
    check_same_study(ValidationSettings(mixed_precision="bf16"), tmp_path)
    check_same_study(ValidationSettings(mixed_precision="no"), tmp_path)
    with pytest.raises(ContamError) as refused:
        check_same_study(ValidationSettings(partitions=4, rows_per_partition=40), tmp_path)
    assert str(refused.value) == (f"{tmp_path}: field '--out': holds a study of other settings (partitions 8 -> 4; "
                                  "rows_per_partition 24 -> 40); give a new --out")


def test_detection_rate_text_and_bad_document() -> None:
    from lm_eval_contam.verdicts.detection_rates import parse_detection

    document = {"design": {"learning_rate": 5e-5, "epochs": 3, "share": 0.15}, "command": "c", "date": "d",
                "methods": {"m": {"detection": {"k": 8, "flagged": 5, "rate": 0.625, "ci": [0.2449, 0.9148]}}}}
    assert parse_detection(document)["m"].text() == (
        "detects 5/8 = 62 % (95 % CI 24–91 %) at the papers' strength (lr 5e-05, 3 epochs, 15 % share), "
        "on the default model")
    del document["methods"]["m"]["detection"]["k"]
    with pytest.raises(ContamError, match="methods.m"):
        parse_detection(document)


def test_a_clean_bill_quotes_the_partitions_shape_and_no_other_shapes_number() -> None:
    """The verdict with a reference was measured on multiple choice only (3/8): a free-text partition's "not flagged"
    must not quote it."""
    from lm_eval_contam.verdicts.detection_rates import clean_bill, parse_detection
    from lm_eval_contam.verdicts.verdict import PartitionVerdict

    counted = {"k": 8, "flagged": 3, "rate": 0.375, "ci": [0.0852, 0.7551]}
    rates = parse_detection({"design": {"learning_rate": 5e-5, "epochs": 3, "share": 0.15}, "command": "c",
                             "date": "d", "methods": {"partition_combined_with_reference": {
                                 "detection": counted, "by_shape": {"multiple choice": {"detection": counted}}}}})
    lift = Verdict(model="m", partition="p", family="likelihood", test="likelihood_lift", title="t", task="t",
                   flagged=False, statistic=None, pvalue=0.4, confidence_interval=None, n=24, null="", rule="",
                   evidence=None)
    on_u = Verdict(model="m", partition="p", family="sentenceorder", test="sentence_order_reference", title="t",
                   task="o", flagged=False, statistic=None, pvalue=0.4, confidence_interval=None, n=24, null="",
                   rule="", evidence=None)
    free_text = PartitionVerdict("m", "p", ((lift, 0.8), (on_u, 0.8)), (), referenced=True)
    assert clean_bill(free_text, rates) == ("detection of this verdict (with a reference model, no control) on free "
                                            "text partitions at the papers' injection strength not measured")
    assert clean_bill(free_text, rates, short=True) == ("detection (with a reference model, no control): not measured "
                                                        "on free text")
    # A test on u that does not drive (the shipped rates measure the sentence-order test on u over its level) leaves
    # the verdict the one without a control: its measured detection is the one to quote.
    from lm_eval_contam.verdicts.verdict import partition_verdicts

    (row,) = partition_verdicts([lift, on_u])
    assert not row.referenced and row.test == "partition_combined_without_control"
    assert [v.test for v in row.over_level] == ["sentence_order_reference"]


def test_wordnet_glosses_make_english_filler(tmp_path: Path) -> None:
    from lm_eval_contam.nullstudy.validation import GLOSSES_PER_PARAGRAPH, gloss_paragraphs

    for part in ("noun", "verb", "adj", "adv"):
        (tmp_path / f"data.{part}").write_text(
            "  1 licence header line\n" + "".join(f"0000{i} 03 n 01 w{i} 0 000 | {part} gloss {i}; \"ex {i}\"  \n"
                                                  for i in range(7)))
    paragraphs = gloss_paragraphs(tmp_path)
    assert len(paragraphs) == 3 and paragraphs[0].startswith('noun gloss 0; "ex 0". noun gloss 1')
    assert sum(p.count("gloss") for p in paragraphs) == 28 and paragraphs[0].count("gloss") == GLOSSES_PER_PARAGRAPH


def test_clean_model_false_positives_take_a_test_out_of_the_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test the validation study saw flagging never-seen partitions on the clean default model stops driving."""
    from lm_eval_contam.report.layout import over_level_line
    from lm_eval_contam.verdicts import verdict as verdict_module

    document = {"command": "c", "date": "d", "methods": {
        "tt_alg1_permutation:instruct": {"false_positive_clean": {"k": 16, "flagged": 4, "rate": 0.25,
                                                                  "ci": [0.0727, 0.5238]}},
        "likelihood_control:control": {"detection": {"k": 8, "flagged": 6, "rate": 0.75, "ci": [0.3491, 0.9681]},
                                       "false_positive_clean": {"k": 16, "flagged": 1, "rate": 0.0625,
                                                                "ci": [0.0016, 0.3023]}}}}
    rates = verdict_module.clean_model_rates(document)
    assert rates["tt_alg1_permutation:instruct"].text() == "25.0 % (4/16; 95 % CI 7.3–52.4 %)"
    monkeypatch.setattr(verdict_module, "shipped_rates", lambda: {})
    monkeypatch.setattr(verdict_module, "shipped_clean_model_rates", lambda: rates)
    monkeypatch.setattr(verdict_module, "shipped_sibling_rates", lambda: {})

    def test(method: str, variant: str, pvalue: float) -> Verdict:
        return Verdict(model="m", partition="P", family=method.split("_")[0], test=method, title=method,
                       task=method, flagged=pvalue <= 0.05, statistic=None, pvalue=pvalue, confidence_interval=None,
                       n=10, null="", rule="", evidence=None, variant=variant)

    (row,) = verdict_module.partition_verdicts([test("tt_alg1_permutation", "instruct", 0.004),
                                                test("likelihood_control", "control", 0.2)])
    assert [v.test for v, _ in row.evidence] == ["likelihood_control"] and row.flagged is False
    assert [v.test for v in row.over_level] == ["tt_alg1_permutation"]
    assert over_level_line(row.over_level[0]).endswith(
        "not driving: false-positive rate 25.0 % (4/16; 95 % CI 7.3–52.4 %) in the validation study (never-seen "
        "partitions, clean default model)")
    # Given rates replace both studies' (the validation study itself decides over the null study's alone).
    within = verdict_module.clean_model_rates({"command": "c", "date": "d", "methods": {"tt_alg1_permutation:instruct": {
        "false_positive_clean": {"k": 16, "flagged": 0, "rate": 0.0, "ci": [0.0, 0.2059]}}}})
    (row,) = verdict_module.partition_verdicts([test("tt_alg1_permutation", "instruct", 0.004)], rates=within)
    assert row.flagged is True
    # A test no study measured does not drive (shown beside it), unless a study is measuring it now (a candidate).
    (row,) = verdict_module.partition_verdicts([test("tt_alg1_permutation", "instruct", 0.004)], rates={})
    assert row.flagged is None and [v.test for v in row.unmeasured] == ["tt_alg1_permutation"]
    (row,) = verdict_module.partition_verdicts([test("tt_alg1_permutation", "instruct", 0.004)], rates={},
                                               candidates=frozenset({"tt_alg1_permutation:instruct"}))
    assert row.flagged is True and not row.unmeasured


@pytest.fixture(scope="module")
def study_setup(tmp_path_factory):
    """A small study's partitions with their tasks per pass (no model trained)."""
    from lm_eval_contam.nullstudy.study import write_task_configs, write_world_data
    from lm_eval_contam.nullstudy.validation import ValidationSettings, study_partitions, write_mc_data

    settings = ValidationSettings(partitions=1, mc_partitions=1, rows_per_partition=10, fresh_per_shape=1)
    study_dir = tmp_path_factory.mktemp("validation").resolve()
    world = write_world_data(settings.world(), 0, study_dir)
    partitions = study_partitions(world, write_task_configs(world), write_mc_data(settings, study_dir),
                                  study_dir, world.options_path, settings.fresh_per_shape)
    return study_dir, world.options_path, partitions


def test_a_tasks_pass_follows_from_what_its_method_needs(study_setup) -> None:
    """Log-likelihoods only: the likelihood pass (every shape); generated text: the generation pass; quiz options:
    the quiz pass (free text only); scored by a reference model too: the reference pass (every shape), or, for a
    method with tests against a control (the likelihood control mode), the likelihood pass and again the
    control-reference pass."""
    _, _, partitions = study_setup
    # The built-ins' tasks by name (a method added later joins the passes beside them: the test below).
    named = ("timetravel", "dcq", "dcr", "likelihood", "incontext", "optionorder", "pairing")
    by_label = {p.partition.label: {scored: kept for scored, tasks in p.tasks.items()
                                    if (kept := tuple(task for task in tasks if task.split("_", 1)[0] in named))}
                for p in partitions}
    assert {task.split("_", 1)[0] for p in partitions for tasks in p.tasks.values() for task in tasks} <= {
        spec.name for spec in registered_methods()}
    assert by_label["Quick Kettle 0 train"] == {
        "likelihood": ("incontext_quick_kettle_0_train", "likelihood_quick_kettle_0_train",
                       "likelihood_quick_kettle_0_train_lift"),
        "generation": ("timetravel_quick_kettle_0_train", "timetravel_quick_kettle_0_train_completion"),
        "quiz": ("dcq_quick_kettle_0_train_ll", "likelihood_quick_kettle_0_train_options"),
        "reference": ("pairing_quick_kettle_0_train",), "control_reference": ("likelihood_quick_kettle_0_train",)}
    assert by_label["Quick Bridge Quiz 0 test"] == {"likelihood": (
        "incontext_quick_bridge_quiz_0_test", "likelihood_quick_bridge_quiz_0_test",
        "likelihood_quick_bridge_quiz_0_test_lift"), "reference": ("optionorder_quick_bridge_quiz_0_test",),
        "control_reference": ("likelihood_quick_bridge_quiz_0_test",)}
    assert by_label["Fresh Council b"] == {"likelihood": (
        "incontext_fresh_council_b", "likelihood_fresh_council_b", "likelihood_fresh_council_b_lift"),
        "reference": ("pairing_fresh_council_b",), "control_reference": ("likelihood_fresh_council_b",)}


def test_a_registered_method_joins_the_passes_without_an_edit(study_setup) -> None:
    """A toy method that scores log-likelihoods joins the likelihood pass (control-free tests first); its task that
    reads quiz options goes to the quiz pass; a toy method that generates has no task in the likelihood pass."""
    from lm_eval_contam import task_dir
    from lm_eval_contam.core.registry import (
        NO_SECTION,
        Generation,
        MethodSpec,
        Quiz,
        QuizSample,
        RenderTarget,
        register_method,
        unregister_method,
    )
    from lm_eval_contam.nullstudy import configs
    from lm_eval_contam.nullstudy.validation import likelihood_pass_configs, scoring_pass

    _, options, partitions = study_setup
    audited = next(p.partition for p in partitions if p.partition.label == "Quick Kettle 0 train")

    def spec(name: str, generation: Generation | None = None) -> MethodSpec:
        def render(partition, target):
            return {partition.task_name(name, variant): configs.dump({
                "task": partition.task_name(name, variant), "test_split": partition.split,
                "metadata": {"method": name, "mode": variant or "plain", **partition.dataset.task_metadata()}})
                for variant in ("", "quiz")}

        return MethodSpec(name=name, title=name, order=99, generation=generation, task_names=lambda p, m: [],
                          render_task_configs=render, verdicts=lambda model: [], section=NO_SECTION,
                          quiz=Quiz(samples=lambda metadata, split: [QuizSample(audited, 10, 0, options)]
                                    if metadata.get("mode") == "quiz" else []))

    scoring, generating = spec("toyscore"), spec("toygen", Generation())
    register_method(scoring)
    register_method(generating)
    try:
        target = RenderTarget(templates=task_dir(), options_path=options)
        rendered = likelihood_pass_configs(audited, target)["likelihood"]
        shown = ("incontext", "toyscore", "likelihood")  # the built-ins that score this partition, and the toy
        assert [name for name in rendered if name.split("_", 1)[0] in shown] == [
            "incontext_quick_kettle_0_train", "toyscore_quick_kettle_0_train", "likelihood_quick_kettle_0_train",
            "likelihood_quick_kettle_0_train_lift"]
        toy_configs = {name: text for toy in (scoring, generating)
                       for name, text in toy.render_task_configs(audited, target).items()}
        assert {name: scoring_pass(configs.load(text)) for name, text in toy_configs.items()} == {
            "toyscore_quick_kettle_0_train": "likelihood", "toyscore_quick_kettle_0_train_quiz": "quiz",
            "toygen_quick_kettle_0_train": "generation", "toygen_quick_kettle_0_train_quiz": "quiz"}
    finally:
        unregister_method("toyscore")
        unregister_method("toygen")


def test_a_candidate_the_study_measures_over_its_level_does_not_drive_its_combined_verdicts() -> None:
    from lm_eval_contam.nullstudy.validation import over_level_here

    def verdict(method: str, partition: str, flagged: bool) -> Verdict:
        return Verdict(model="m", partition=partition, family="x", test=method, title=method, task=method,
                       flagged=flagged, statistic=None, pvalue=0.01 if flagged else 0.5, confidence_interval=None,
                       n=10, null="", rule="", evidence=None)

    # 4 of 8 siblings flagged: 95 % CI 16-84 %, over 5 %; 1 of 8 on the filler model (CI 0.3-53 %) and any number of
    # injected partitions are not.
    labelled = [(verdict("pairing_reference", f"S{i}", i < 4), "sibling") for i in range(8)]
    labelled += [(verdict("option_order_reference", f"F{i}", i < 1), "filler") for i in range(8)]
    labelled += [(verdict("option_order_reference", f"I{i}", True), "injected") for i in range(8)]
    assert over_level_here(labelled) == frozenset({"pairing_reference"})
    # 3 of 8 on the author fine-tune (CI 9-76 %): a test without a reference is over its level there too.
    labelled += [(verdict("option_order", f"A{i}", i < 3), "author") for i in range(8)]
    assert over_level_here(labelled) == frozenset({"pairing_reference", "option_order"})


def test_a_verdict_with_a_control_and_a_reference_quotes_its_own_measured_detection() -> None:
    """An audit with both options computes its own verdict (rate key partition_combined_with_control_and_reference);
    its "not flagged" quotes that verdict's detection on the partition's shape (the shipped study: 3/8 free text)."""
    from lm_eval_contam.verdicts.detection_rates import clean_bill
    from lm_eval_contam.verdicts.verdict import partition_verdicts

    def test(name: str, pvalue: float) -> Verdict:
        return Verdict(model="m", partition="p", family="likelihood", test=name, title=name, task=name,
                       flagged=pvalue <= 0.05, statistic=None, pvalue=pvalue, confidence_interval=None, n=24, null="",
                       rule="", evidence=None, variant="control", shape="free text")

    (row,) = partition_verdicts([test("likelihood_control", 0.3), test("likelihood_control_reference", 0.2)])
    assert (row.test, row.setting) == ("partition_combined_with_control_and_reference",
                                       "with a control and a reference model")
    assert clean_bill(row) == ("at the papers' injection strength this verdict (with a control and a reference model) "
                               "finds 3 of 8 injected free text partitions of 24 items")


def test_a_study_partition_larger_than_the_methods_sample_is_scored_whole(tmp_path: Path) -> None:
    """The methods draw 100 rows unless a task says otherwise: a study of 120-item partitions asks every task of the
    log-likelihood and reference passes for all 120 (before, the tasks drew 100 of them, in a study that reported
    120-item partitions); a partition within the default keeps the task YAMLs an audit writes."""
    from lm_eval_contam import task_dir
    from lm_eval_contam.core.registry import RenderTarget
    from lm_eval_contam.kit.instances import sample_indices
    from lm_eval_contam.methods.optionorder.task import OptionOrderSettings
    from lm_eval_contam.nullstudy import configs
    from lm_eval_contam.nullstudy.validation import (
        ValidationSettings,
        likelihood_pass_configs,
        mc_specs,
        write_mc_data,
    )

    target = RenderTarget(templates=task_dir(), options_path=tmp_path / "options.json", reference=True)
    for rows, asked, drawn in ((120, 120, 120), (24, None, 24)):
        settings = ValidationSettings(partitions=1, mc_partitions=1, rows_per_partition=rows)
        study_dir = (tmp_path / str(rows)).resolve()
        partition = mc_specs(write_mc_data(settings, study_dir), study_dir)[0].partition("test")
        passes = likelihood_pass_configs(partition, target)
        found = {name: configs.load(text)["metadata"].get("num_instances")
                 for rendered in passes.values() for name, text in rendered.items()}
        assert found == {"incontext_quick_bridge_quiz_0_test": asked, "likelihood_quick_bridge_quiz_0_test": asked,
                         "likelihood_quick_bridge_quiz_0_test_lift": asked,
                         "optionorder_quick_bridge_quiz_0_test": asked}
        metadata = configs.load(passes["reference"]["optionorder_quick_bridge_quiz_0_test"])["metadata"]
        task = OptionOrderSettings.from_metadata(metadata, "test")
        assert sample_indices(partition, partition.rows(), task.num_instances, task.seed) == list(range(drawn))
        if rows == 120:  # the same task without the study's num_instances: the 100 rows it drew before
            default = OptionOrderSettings.from_metadata(
                {key: value for key, value in metadata.items() if key != "num_instances"}, "test")
            assert len(sample_indices(partition, partition.rows(), default.num_instances, default.seed)) == 100
