"""Issue 51, group 5: a reference that is the audited model by another name (its weights copied beside a card, a LoRA
saved before training) got the power claim while u = 0 for every text; it is refused before anything is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_bad_input_audit import _refused
from test_bad_input_tasks import home  # noqa: F401 - the cache home under the test's folder, as a fixture

from lm_eval_contam.audit.reference_model import NO_POWER_TAIL


def _audit(model: str, out: Path, *extra: str) -> list[str]:
    return ["audit", "--model", model, "--label", "m", "--partitions", "toy_news:train", "--output_path", str(out),
            *extra]


def test_a_copy_of_the_models_weights_with_a_card_added_is_refused_as_its_reference(
        tiny_model_dir: Path, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture) -> None:
    copy = Path(shutil.copytree(tiny_model_dir, tmp_path / "copy"))
    (copy / "README.md").write_text("---\nbase_model: nobody\n---\nThe tiny model, copied.\n")
    line = _refused(capsys, _audit(str(tiny_model_dir), tmp_path / "audit", "--reference-model", str(copy)),
                    tmp_path)
    assert line == (f"lm-eval-contam audit: error: field '--reference-model': the reference model has the audited "
                    f"model's weights: '{copy}' holds the weight files of '{tiny_model_dir}' (their sha256; only "
                    f"other files differ), so u = 0 for every text and no test on u has power; {NO_POWER_TAIL}")
    assert not home.exists()


def test_the_suites_nudged_copy_is_taken_as_a_reference(tiny_model_dir: Path, tiny_model_copy: Path) -> None:
    """The fixture the reference tests audit against differs in one bias: its weight files are not the model's."""
    from lm_eval_contam.audit.reference_model import check_reference_model
    from lm_eval_contam.lmeval.generation import ModelSpec

    check_reference_model(ModelSpec.parse(str(tiny_model_copy)), ModelSpec.parse(str(tiny_model_dir)))


def test_an_adapter_saved_before_training_is_refused_against_its_base(
        tiny_model_dir: Path, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture) -> None:
    peft = pytest.importorskip("peft")
    from transformers import AutoModelForCausalLM

    untrained = peft.get_peft_model(AutoModelForCausalLM.from_pretrained(str(tiny_model_dir)),
                                    peft.LoraConfig(r=2, target_modules=["c_attn"], fan_in_fan_out=True))
    folder = tmp_path / "lora"
    untrained.save_pretrained(str(folder))  # peft starts every B at zero
    line = _refused(capsys, _audit(str(folder), tmp_path / "audit"), tmp_path)
    assert line == (f"lm-eval-contam audit: error: field '--reference-model': the audited PEFT adapter {folder} "
                    f"changes nothing: its 2 LoRA B matrices are all zero (an adapter saved before training), so the "
                    f"audited model is its base and u = 0 for every text; {NO_POWER_TAIL} (found: the base model "
                    f"lm-eval loads the PEFT adapter {folder} on)")
    assert not home.exists()
