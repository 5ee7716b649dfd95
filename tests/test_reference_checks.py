"""The reference model found for the user and checked before anything runs, and empty flag values refused (issue 41,
part A).

Every refusal is one line naming the flag, exit 2, and nothing written: not the audit directory, not the cache home.
The adapter case runs end to end: a tiny base, a LoRA adapter saved with peft, ``audit --model <adapter folder>``
audited against the base with no reference flag.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from question_mc_task import TASK_YAML
from test_bad_input_audit import _refused

from lm_eval_contam.audit.reference_model import base_chain, choose_reference, suggestion
from lm_eval_contam.cli import main
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.models.tiny_model import build_tiny_model

BLANK = "expected a value (an unset shell variable gives an empty one): give one, or leave the flag out"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache home of the test's own, not made yet: a refused command must not make it."""
    found = tmp_path / "home"
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(found))
    return found


def _audit(model: Path, out: Path, *extra: str) -> list[str]:
    return ["audit", "--model", str(model), "--label", "tuned", "--partitions", "toy_news:test", "--output_path",
            str(out), *extra]


@pytest.mark.parametrize("flag", ["--reference-model", "--model", "--output_path", "--label", "--tasks", "--partitions",
                                  "--dcq-generator", "--include_path"])
@pytest.mark.parametrize("value", ["", " "])
def test_audit_refuses_an_empty_value_of_any_flag(tiny_model_dir: Path, tmp_path: Path, home: Path,
                                                  capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
                                                  flag: str, value: str) -> None:
    monkeypatch.chdir(tmp_path)  # --output_path '' would be the working directory
    line = _refused(capsys, _audit(tiny_model_dir, tmp_path / "audit", flag, value), tmp_path)
    assert line == f"lm-eval-contam audit: error: field '{flag}': got {value!r}; {BLANK}"
    assert not (tmp_path / "audit").exists() and not home.exists()


def test_audit_refuses_an_empty_value_given_with_equals(tiny_model_dir: Path, tmp_path: Path, home: Path,
                                                       capsys: pytest.CaptureFixture) -> None:
    line = _refused(capsys, _audit(tiny_model_dir, tmp_path / "audit", "--reference-model="), tmp_path)
    assert line == f"lm-eval-contam audit: error: field '--reference-model': got ''; {BLANK}"


@pytest.mark.parametrize(("flag", "value"), [("--model_args", ""), ("--tasks", " "), ("--output_path", "")])
def test_run_refuses_an_empty_value_of_lm_evals_flags(tiny_model_dir: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
                                                      flag: str, value: str) -> None:
    monkeypatch.chdir(tmp_path)
    argv = {"--model_args": f"pretrained={tiny_model_dir}", "--tasks": "arc_easy", "--output_path": "out"}
    argv[flag] = value
    line = _refused(capsys, ["run", "--model", "hf", *(part for pair in argv.items() for part in pair)], tmp_path)
    assert line == f"lm-eval-contam run: error: field '{flag}': got {value!r}; {BLANK}"


def test_audit_refuses_sample_with_data_as_it_would_be_ignored(tiny_model_dir: Path, tmp_path: Path, home: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    data = tmp_path / "bench.jsonl"
    data.write_text('{"text": "a b c"}\n')
    line = _refused(capsys, ["audit", "--model", str(tiny_model_dir), "--data", str(data), "--split", "test", "--name",
                             "Bench", "--text-field", "text", "--sample", "5", "--output_path",
                             str(tmp_path / "audit")], tmp_path)
    assert line == ("lm-eval-contam audit: error: field '--sample': samples the --tasks benchmarks' instances; --data "
                    "and --partitions partitions keep their methods' own samples, so it would be ignored: leave it "
                    "out, or audit with --tasks")


def test_a_missing_reference_folder_is_named_as_the_reference_not_the_model(tiny_model_dir: Path, tmp_path: Path,
                                                                            home: Path,
                                                                            capsys: pytest.CaptureFixture) -> None:
    missing = tmp_path / "base"
    line = _refused(capsys, _audit(tiny_model_dir, tmp_path / "audit", "--reference-model", str(missing)), tmp_path)
    assert line == (f"lm-eval-contam audit: error: field '--reference-model': cannot load model spec '{missing}': no "
                    f"such folder '{missing}'; expected an HF model folder, a Hub id or <backend>:<key=value,...>")
    assert not home.exists()


def test_a_chat_api_reference_is_refused_before_the_audit_dir_or_cache_home_exist(
        tiny_model_dir: Path, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture) -> None:
    chat = "local-chat-completions:model=base,base_url=http://127.0.0.1:9/v1/chat/completions"
    line = _refused(capsys, _audit(tiny_model_dir, tmp_path / "audit", "--reference-model", chat), tmp_path)
    assert line == ("lm-eval-contam audit: error: field '--reference-model': a reference model scores log-likelihoods "
                    "only, but lm-eval's LocalChatCompletion cannot score prompts (chat endpoints return no prompt "
                    "log-probabilities); give a local model (hf, vllm) or a completions server that returns prompt "
                    "log-probabilities")
    assert not (tmp_path / "audit").exists() and not home.exists()


@pytest.mark.parametrize("copy", [False, True])
def test_the_audited_model_as_its_own_reference_is_refused(tiny_model_dir: Path, tmp_path: Path, home: Path,
                                                           capsys: pytest.CaptureFixture, copy: bool) -> None:
    """The same folder (given another way), or a copy of its files under another name: u would be 0 for every
    text."""
    reference = f"{tiny_model_dir}/" if not copy else str(shutil.copytree(tiny_model_dir, tmp_path / "base"))
    line = _refused(capsys, _audit(tiny_model_dir, tmp_path / "audit", "--reference-model", reference), tmp_path)
    assert line == (f"lm-eval-contam audit: error: field '--reference-model': the reference model is the audited "
                    f"model: '{reference}' has the same weights as '{tiny_model_dir}' (every file's sha256); a "
                    f"reference must be the checkpoint it was fine-tuned from")
    assert not home.exists()


def test_a_reference_with_a_shorter_window_is_refused_naming_both_windows(tiny_model_dir: Path, tmp_path: Path,
                                                                          home: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    short = build_tiny_model(tmp_path / "short", ["a tiny corpus of words", "more words here"], n_positions=64)
    line = _refused(capsys, _audit(tiny_model_dir, tmp_path / "audit", "--reference-model", str(short)), tmp_path)
    assert line == ("lm-eval-contam audit: error: field '--reference-model': its context window is 64 tokens, the "
                    "audited model's 1024: lm-eval would cut from the left, for the reference only, the requests "
                    "longer than 64 tokens, and u would compare a cut text with a whole one; give the audited model "
                    "max_length=64 in its model_args (hf:pretrained=...,max_length=64) so both score the same window, "
                    "or a reference whose window is at least 1024")


def _card(folder: Path, base: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text(f"---\nlicense: mit\nbase_model: {json.dumps(base)}\n---\n# A model\n")
    return folder


def test_auto_follows_the_model_cards_chain_through_local_folders_to_where_it_starts(tmp_path: Path) -> None:
    """sft2 -> sft1 (a list: the first) -> a local folder naming no base: that one is the reference."""
    root = tmp_path / "pretrained"
    root.mkdir()
    sft1 = _card(tmp_path / "sft1", [str(root), "other/model"])
    sft2 = _card(tmp_path / "sft2", str(sft1))
    chosen = choose_reference("auto", ModelSpec.parse(str(sft2)))
    assert chosen.spec.model_args == f"pretrained={root}" and chosen.spec.flag == "--reference-model"
    assert chosen.found_by == (f"--reference-model auto: {sft1} ({sft2}/README.md base_model) -> {root} "
                               f"({sft1}/README.md base_model)")
    # A Hub id ends the chain: it is named, never fetched.
    hub = _card(tmp_path / "tuned", "HuggingFaceTB/SmolLM2-135M")
    assert base_chain(ModelSpec.parse(str(hub))).spec.model_args == "pretrained=HuggingFaceTB/SmolLM2-135M"
    # No flag: the audit suggests it in one line.
    assert suggestion(ModelSpec.parse(str(sft2))) == (
        f"suggestion: give --reference-model auto: this model's folder names the checkpoint it was fine-tuned from "
        f"({sft1} ({sft2}/README.md base_model) -> {root} ({sft1}/README.md base_model)), and the tests on u read the "
        f"model against it")
    assert suggestion(ModelSpec.parse(str(root))) is None


def test_auto_refuses_a_folder_naming_no_base_a_hub_id_and_a_chain_that_loops(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "README.md").write_text("# no front matter\n")
    with pytest.raises(ContamError) as error:
        choose_reference("auto", ModelSpec.parse(str(plain)))
    assert str(error.value) == (f"field '--reference-model': 'auto' found no base model: {plain} has no "
                                "adapter_config.json and its model card (README.md) names no base_model; give the "
                                "checkpoint it was fine-tuned from")
    with pytest.raises(ContamError) as error:
        choose_reference("auto", ModelSpec.parse("org/model"))
    assert str(error.value) == ("field '--reference-model': 'auto' reads the audited model's own folder, and "
                                "'org/model' is not a local folder; give the checkpoint it was fine-tuned from")
    first, second = tmp_path / "first", tmp_path / "second"
    _card(first, str(second))
    _card(second, str(first))
    with pytest.raises(ContamError, match=f"the chain of base models comes back to {first} "):
        choose_reference("auto", ModelSpec.parse(str(first)))


@pytest.fixture(scope="module")
def adapter(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoRA adapter on the tiny base, saved with peft (its adapter_config.json names the base)."""
    pytest.importorskip("peft")
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(str(tiny_model_dir)),
                           LoraConfig(r=2, target_modules=["c_attn"], fan_in_fan_out=True, init_lora_weights=False))
    folder = tmp_path_factory.mktemp("adapter") / "lora"
    model.save_pretrained(str(folder))
    return folder


def test_an_adapter_is_loaded_on_its_base_and_the_base_is_its_reference(tiny_model_dir: Path, adapter: Path) -> None:
    from lm_eval_contam.audit.reference_model import as_lm_eval_loads_adapters

    spec = as_lm_eval_loads_adapters(ModelSpec.parse(f"hf:pretrained={adapter},dtype=float32"))
    assert spec.model_args == f"pretrained={tiny_model_dir},peft={adapter},dtype=float32"
    chosen = choose_reference(None, spec)
    assert chosen.spec.model_args == f"pretrained={tiny_model_dir}"
    assert chosen.found_by == f"the base model lm-eval loads the PEFT adapter {adapter} on"
    # auto reads the same: the adapter's base, then that folder's card (none here)
    assert choose_reference("auto", spec).spec == chosen.spec
    assert choose_reference(None, ModelSpec.parse(str(tiny_model_dir))) is None


def test_audit_of_an_adapter_folder_runs_against_its_base_with_no_flag_and_says_so(
        tiny_model_dir: Path, adapter: Path, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture) -> None:
    data = tmp_path / "items.jsonl"
    words = ["saw", "spoon", "pillow", "kettle", "horse", "hen", "goat", "cow"]
    data.write_text("".join(json.dumps({"question": f"Which thing is item {i}?", "choices": words[i:i + 4],
                                        "answer": i % 4}) + "\n" for i in range(4)))
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "items_mc.yaml").write_text(TASK_YAML.format(name="items_mc", data=data))
    out = tmp_path / "audit"
    assert main(["audit", "--model", str(adapter), "--tasks", "items_mc", "--include_path", str(tasks),
                 "--methods", "optionorder", "--no-likelihood", "--output_path", str(out)]) == 0
    found_by = f"the base model lm-eval loads the PEFT adapter {adapter} on"
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"reference model: hf pretrained={tiny_model_dir} ({found_by})"
    audit = json.loads((out / "audit.json").read_text())
    (model,) = audit["models"]
    assert model["model_args"] == f"pretrained={tiny_model_dir},peft={adapter}"
    assert model["reference"]["model_args"] == f"pretrained={tiny_model_dir}"
    assert model["reference"]["found_by"] == found_by
    assert model["reference"]["tasks"] == ["optionorder_task_items_mc_test"]
    assert audit["settings"]["reference_found_by"] == found_by
    assert audit["identity"]["reference_model"] == str(tiny_model_dir)
    assert f"reference: hf pretrained={tiny_model_dir} (found: {found_by})" in (out / "report.md").read_text()


def test_run_refuses_auto_as_the_audits_own(tiny_model_dir: Path) -> None:
    from lm_eval_contam.audit.reference_scoring import plan_reference

    with pytest.raises(ContamError) as error:
        plan_reference("auto", ModelSpec.parse(str(tiny_model_dir)), [], None)
    assert str(error.value) == ("field '--reference-model': 'auto' is the audit's (lm-eval-contam audit "
                                "--reference-model auto); give run the checkpoint the model was fine-tuned from")


def test_an_adapters_base_with_nothing_to_score_is_not_run_and_the_audit_says_so(
        tiny_model_dir: Path, adapter: Path, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture) -> None:
    """Found, not asked for: an audit with no test on u (here DCQ alone) runs as it would without a reference."""
    out = tmp_path / "audit"
    assert main(["audit", "--model", str(adapter), "--partitions", "toy_news:test", "--methods", "dcq", "--limit", "1",
                 "--no-report", "--output_path", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (f"reference model: hf pretrained={tiny_model_dir} (the base model lm-eval loads the PEFT "
                        f"adapter {adapter} on)")
    assert (f"reference model hf pretrained={tiny_model_dir} not run: no task of a method that differences the two "
            "models (likelihood, optionorder, pairing, reordered, sentenceorder) is among the tasks") in lines
    (model,) = json.loads((out / "audit.json").read_text())["models"]
    assert model["reference"] is None and model["model_args"] == f"pretrained={tiny_model_dir},peft={adapter}"
