"""The reference model of an audit (``--reference-model``): found where the audited model names its base, and checked
against the audited model before anything is written.

lm-eval loads a PEFT adapter as ``hf`` with ``pretrained=BASE,peft=ADAPTER``; the adapter was trained on BASE, so an
audited adapter (``peft=`` given, or ``--model`` naming a local adapter folder) is audited against BASE with no flag.
``--reference-model auto`` reads a local folder's own record of its base: peft's ``adapter_config.json``
(``base_model_name_or_path``) or the model card's ``base_model`` (``README.md`` YAML front matter; a list: the first),
and follows the chain while the base named is itself a local folder naming a base, to the checkpoint the chain starts
from (a Hub id, or a folder naming none). Nothing is read from the Hub: a named Hub id is only loaded by lm-eval, as
it would load it given as the reference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from lm_eval_contam import harness
from lm_eval_contam.core.audit_identity import weight_tensors_identity, weights_identity
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.lmeval.generation import ModelSpec

REFERENCE_FLAG = "--reference-model"
AUTO = "auto"  # --reference-model auto: the base the audited model's folder names
ADAPTER_CONFIG = "adapter_config.json"  # peft's; base_model_name_or_path names the model the adapter was trained on
MODEL_CARD = "README.md"  # the Hub's model card; its YAML front matter's base_model names the checkpoint fine-tuned


@dataclass(frozen=True)
class ChosenReference:
    """The reference model of an audit and how it was found (None: given as it is with ``--reference-model``)."""

    spec: ModelSpec
    found_by: str | None = None

    def line(self) -> str:
        """What the first screen says about it."""
        how = self.found_by or f"given with {REFERENCE_FLAG}"
        return f"reference model: {self.spec.backend} {self.spec.model_args} ({how})"


def card_base_model(card: Path) -> str | None:
    """The ``base_model`` of a model card's YAML front matter (a list: its first entry), or None when it names none."""
    text = card.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    end = next((number for number, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        return None
    try:
        front = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as error:
        raise ContamError(f"its YAML front matter does not parse ({type(error).__name__}); expected the model card's "
                          "metadata", source=str(card), field="base_model") from None
    base = front.get("base_model") if isinstance(front, dict) else None
    if isinstance(base, list):
        base = base[0] if base else None
    if base is not None and not isinstance(base, str):  # a mapping or a number: a base named, but not readably
        raise ContamError(f"got {type(base).__name__} {base!r:.80}; expected the checkpoint's Hub id or folder (or a "
                          "list of them)", source=str(card), field="base_model")
    return base.strip() if isinstance(base, str) and base.strip() else None


def named_base(folder: Path) -> tuple[str, str] | None:
    """The base a local model folder names, and where it says so: its ``adapter_config.json``'s
    ``base_model_name_or_path``, else its model card's ``base_model``; None when it names none."""
    adapter = folder / ADAPTER_CONFIG
    if adapter.is_file():
        try:
            config = json.loads(adapter.read_text(encoding="utf-8"))
        except ValueError as error:
            raise ContamError(f"cannot read it ({type(error).__name__}); expected peft's adapter JSON",
                              source=str(adapter)) from None
        base = config.get("base_model_name_or_path") if isinstance(config, dict) else None
        if not isinstance(base, str) or not base.strip():
            raise ContamError(f"got {base!r}; expected the model the adapter was trained on", source=str(adapter),
                              field="base_model_name_or_path")
        return base.strip(), f"{adapter} base_model_name_or_path"
    card = folder / MODEL_CARD
    base = card_base_model(card) if card.is_file() else None
    return (base, f"{card} base_model") if base else None


def _local_folder(value: object) -> Path | None:
    path = Path(str(value or "")).expanduser()
    return path if str(value or "").strip() and path.is_dir() else None


def as_lm_eval_loads_adapters(spec: ModelSpec) -> ModelSpec:
    """An ``hf`` spec whose ``pretrained`` is a local PEFT adapter folder, as lm-eval loads an adapter:
    ``pretrained=<its base>,peft=<the folder>`` (its other model_args kept); any other spec as it is."""
    folder = _local_folder(spec.arguments.get("pretrained"))
    if spec.backend != "hf" or "peft" in spec.arguments or folder is None or not (folder / ADAPTER_CONFIG).is_file():
        return spec
    base, _ = named_base(folder)  # an adapter config names its base, or is refused
    pairs = [f"pretrained={base},peft={folder}" if pair.partition("=")[0].strip() == "pretrained" else pair
             for pair in spec.model_args.split(",")]
    return ModelSpec(backend=spec.backend, model_args=",".join(pairs), extra=spec.extra, spec=spec.spec, flag=spec.flag)


def adapter_base(spec: ModelSpec) -> ChosenReference | None:
    """The reference of an audited PEFT adapter (``peft=`` in an ``hf`` spec): the model lm-eval loads it on."""
    adapter, base = spec.arguments.get("peft"), spec.arguments.get("pretrained")
    if spec.backend != "hf" or not adapter or not base:
        return None
    return ChosenReference(ModelSpec.parse(str(base), flag=REFERENCE_FLAG),
                           f"the base model lm-eval loads the PEFT adapter {adapter} on")


def base_chain(spec: ModelSpec) -> ChosenReference:
    """``--reference-model auto``: the base the audited model's local folder names, followed while that base is a
    local folder naming its own (refused in one line when the folder names none, or the chain comes back on itself)."""
    adapter, pretrained = spec.arguments.get("peft"), spec.arguments.get("pretrained")
    steps: list[tuple[str, str]] = []  # (base, where it is named)
    if spec.backend == "hf" and adapter and pretrained:
        steps.append((str(pretrained), f"the model lm-eval loads the PEFT adapter {adapter} on"))
    elif _local_folder(pretrained) is None:
        raise ContamError(f"'{AUTO}' reads the audited model's own folder, and {spec.spec or spec.model_args!r} is not "
                          "a local folder; give the checkpoint it was fine-tuned from", field=REFERENCE_FLAG)
    current = _local_folder(pretrained)
    seen = {current.resolve()} if current is not None else set()
    while current is not None and (found := named_base(current)) is not None:
        steps.append(found)
        current = _local_folder(found[0])
        if current is not None and current.resolve() in seen:
            raise ContamError(f"the chain of base models comes back to {found[0]} ({'; '.join(w for _, w in steps)})",
                              field=REFERENCE_FLAG)
        if current is not None:
            seen.add(current.resolve())
    if not steps:
        raise ContamError(f"'{AUTO}' found no base model: {pretrained} has no {ADAPTER_CONFIG} and its model card "
                          f"({MODEL_CARD}) names no base_model; give the checkpoint it was fine-tuned from",
                          field=REFERENCE_FLAG)
    return ChosenReference(ModelSpec.parse(steps[-1][0], flag=REFERENCE_FLAG),
                           f"{REFERENCE_FLAG} {AUTO}: " + " -> ".join(f"{base} ({where})" for base, where in steps))


def choose_reference(given: str | None, audited: ModelSpec) -> ChosenReference | None:
    """The audit's reference: ``--reference-model`` as given, or found (``auto``: :func:`base_chain`; no flag and an
    audited PEFT adapter: :func:`adapter_base`); None without either."""
    if given == AUTO:
        return base_chain(audited)
    if given is not None and given.lower() == AUTO and not Path(given).exists():
        raise ContamError(f"got {given!r}: no such folder; '{AUTO}' (lower case) finds the base the audited model's "
                          "folder names", field=REFERENCE_FLAG)
    if given is not None:
        return ChosenReference(ModelSpec.parse(given, flag=REFERENCE_FLAG))
    return adapter_base(audited)


def suggestion(audited: ModelSpec) -> str | None:
    """With no reference: the line suggesting ``--reference-model auto`` when the audited model's folder names its
    base (None when it names none, or its record of it does not read)."""
    if _local_folder(audited.arguments.get("pretrained")) is None:
        return None
    try:
        found = base_chain(audited)
    except ContamError:
        return None
    return (f"suggestion: give {REFERENCE_FLAG} {AUTO}: this model's folder names the checkpoint it was fine-tuned "
            f"from ({found.found_by.partition(': ')[2]}), and the tests on u read the model against it")


NO_POWER_TAIL = "a reference must be the checkpoint the audited model was fine-tuned from (or audit without one)"


def untrained_adapter(spec: ModelSpec) -> str | None:
    """Why a local PEFT adapter (``peft=``) leaves its base as it is: every LoRA ``B`` matrix of its safetensors is
    zero (peft starts B at zero, so an adapter saved before training adds nothing); None for any other model."""
    adapter = _local_folder(spec.arguments.get("peft")) if spec.backend == "hf" else None
    weights = sorted(adapter.glob("*.safetensors")) if adapter is not None else []
    if not weights:
        return None
    from safetensors import safe_open

    lora_b = 0
    for path in weights:
        with safe_open(str(path), framework="pt") as tensors:
            for name in tensors.keys():
                if "lora_B" in name or "lora_embedding_B" in name:
                    if tensors.get_tensor(name).count_nonzero():
                        return None
                    lora_b += 1
    return f"its {lora_b} LoRA B matrices are all zero (an adapter saved before training)" if lora_b else None


def check_reference_model(reference: ModelSpec, audited: ModelSpec) -> None:
    """Everything about the reference that needs nothing written, each fault one line naming ``--reference-model``:
    its spec loads (as ``--model``'s is checked), it scores prompts (the tests on u only read log-likelihoods), it is
    not the audited model (u would be 0 for every text: no test could find anything), and its context window is not
    shorter than the audited model's (lm-eval would cut from the left, for the reference only, the texts the audited
    model scores whole)."""
    reference.check()
    harness.check_scores_prompts(reference)
    identity = weights_identity(reference.arguments)
    if identity and identity == weights_identity(audited.arguments):
        raise ContamError(f"the reference model is the audited model: {reference.spec or reference.model_args!r} has "
                          f"the same weights as {audited.spec or audited.model_args!r} (every file's sha256); a "
                          "reference must be the checkpoint it was fine-tuned from", field=REFERENCE_FLAG)
    tensors = weight_tensors_identity(reference.arguments)
    if tensors and tensors == weight_tensors_identity(audited.arguments):
        raise ContamError(f"the reference model has the audited model's weights: "
                          f"{reference.spec or reference.model_args!r} holds the weight files of "
                          f"{audited.spec or audited.model_args!r} (their sha256; only other files differ), so u = 0 "
                          f"for every text and no test on u has power; {NO_POWER_TAIL}", field=REFERENCE_FLAG)
    unchanged = untrained_adapter(audited)
    if unchanged is not None and reference.arguments.get("pretrained") == audited.arguments.get("pretrained"):
        raise ContamError(f"the audited PEFT adapter {audited.arguments['peft']} changes nothing: {unchanged}, so the "
                          f"audited model is its base and u = 0 for every text; {NO_POWER_TAIL}", field=REFERENCE_FLAG)
    window, audited_window = reference.window, audited.window
    if window is not None and audited_window is not None and window.tokens < audited_window.tokens:
        raise ContamError(f"its context window is {window.tokens} tokens, the audited model's {audited_window.tokens}: "
                          "lm-eval would cut from the left, for the reference only, the requests longer than "
                          f"{window.tokens} tokens, and u would compare a cut text with a whole one; give the audited "
                          f"model max_length={window.tokens} in its model_args (hf:pretrained=...,max_length="
                          f"{window.tokens}) so both score the same window, or a reference whose window is at least "
                          f"{audited_window.tokens}", field=REFERENCE_FLAG)
