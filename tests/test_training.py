"""Continued pre-training resumes from its per-epoch checkpoint and ends where an uninterrupted run ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from lm_eval_contam.models import training

TEXTS = [f"the {word} walked to the market on day {day} and bought bread." for word in ("cat", "dog", "fox", "owl")
         for day in range(6)]


def _weights(path: Path) -> dict:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(path).state_dict()


def test_interrupted_training_resumes_to_the_same_model(tiny_model_dir: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    settings = dict(epochs=3, learning_rate=1e-3, batch_size=4, max_length=32, seed=3, eval_texts=TEXTS[:4])
    straight = training.train_on_texts(tiny_model_dir, TEXTS, out_dir=tmp_path / "straight", **settings)

    save = training._save_checkpoint

    def save_then_stop(path: Path, state: dict) -> None:
        save(path, state)
        if len(state["history"]["train_loss"]) == 1:
            raise KeyboardInterrupt  # killed right after the first epoch's checkpoint

    monkeypatch.setattr(training, "_save_checkpoint", save_then_stop)
    with pytest.raises(KeyboardInterrupt):
        training.train_on_texts(tiny_model_dir, TEXTS, out_dir=tmp_path / "resumed", checkpoint_dir=tmp_path / "ckpt",
                                **settings)
    monkeypatch.undo()
    assert not (tmp_path / "resumed").exists() and (tmp_path / "ckpt" / training.CHECKPOINT_FILE).is_file()
    resumed = training.train_on_texts(tiny_model_dir, TEXTS, out_dir=tmp_path / "resumed",
                                      checkpoint_dir=tmp_path / "ckpt", **settings)
    assert resumed == straight and len(resumed["train_loss"]) == 3 and len(resumed["eval_loss"]) == 4
    expected, found = _weights(tmp_path / "straight"), _weights(tmp_path / "resumed")
    assert all(torch.equal(expected[name], found[name]) for name in expected)


def test_a_checkpoint_of_another_run_is_not_resumed(tiny_model_dir: Path, tmp_path: Path) -> None:
    settings = dict(epochs=1, learning_rate=1e-3, batch_size=4, max_length=32, seed=3)
    training.train_on_texts(tiny_model_dir, TEXTS, out_dir=tmp_path / "a", checkpoint_dir=tmp_path / "ckpt",
                            **settings)
    # Same checkpoint folder, other texts: trains from the start (one epoch recorded, not zero).
    history = training.train_on_texts(tiny_model_dir, TEXTS[:8], out_dir=tmp_path / "b",
                                      checkpoint_dir=tmp_path / "ckpt", **settings)
    assert len(history["train_loss"]) == 1


def test_bf16_where_it_is_emulated_trains_and_says_so(tiny_model_dir: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # On a CPU without native bf16 (AVX2 only) a bf16 step of the default model took 248 s against 10 s in fp32: an
    # explicit bf16 is kept (the user asked for it) but said to be emulated; the study's default picks fp32 there.
    from accelerate.state import AcceleratorState

    settings = dict(epochs=1, learning_rate=1e-3, batch_size=4, max_length=32, seed=3)
    # accelerate keeps one precision per process: the other tests' fp32 state is reset before and after
    AcceleratorState._reset_state(reset_partial_state=True)
    monkeypatch.setattr(training, "native_bf16", lambda device=None: False)
    training.train_on_texts(tiny_model_dir, TEXTS[:8], out_dir=tmp_path / "emulated", mixed_precision="bf16",
                            **settings)
    assert "bf16 is emulated on this CPU" in capsys.readouterr().err
    assert training.default_mixed_precision() == "no"
    monkeypatch.setattr(training, "native_bf16", lambda device=None: True)
    training.train_on_texts(tiny_model_dir, TEXTS[:8], out_dir=tmp_path / "native", mixed_precision="bf16", **settings)
    AcceleratorState._reset_state(reset_partial_state=True)
    assert "emulated" not in capsys.readouterr().err
    assert training.default_mixed_precision() == "bf16"


@pytest.mark.parametrize(("avx512_bf16", "amx", "native"), [(False, False, False), (True, False, True),
                                                             (False, True, True)])
def test_native_bf16_reads_the_cpus_bf16_flags_not_avx512(monkeypatch: pytest.MonkeyPatch, avx512_bf16: bool,
                                                           amx: bool, native: bool) -> None:
    # oneDNN's check says yes on any AVX512 CPU (Skylake, Ice Lake), where bf16 is emulated: only these two flags count
    import torch

    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    assert training.native_bf16("cpu") is native


@pytest.mark.parametrize(("capability", "capable"), [((7, 5), False), ((8, 0), True), ((9, 0), True)])
def test_native_bf16_on_cuda_is_ampere_or_later(monkeypatch: pytest.MonkeyPatch, capability: tuple[int, int],
                                                capable: bool) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    assert training.native_bf16("cuda") is capable  # a pre-Ampere GPU (a T4's 7.5) emulates bf16
