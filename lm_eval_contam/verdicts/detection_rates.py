"""Detection at the papers' injection strength, as the validation study measured it on the default model.

``scripts/validation_study.py --papers --write-rates`` writes the shipped file
(:mod:`lm_eval_contam.nullstudy.validation`); the report shows each verdict's
detection rate beside the null study's false-positive rate (:func:`measured_detection`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.stats import ConfidenceInterval
from lm_eval_contam.core.registry import controlled_tests
from lm_eval_contam.core.split_tests import binomial_interval
from lm_eval_contam.verdicts.verdict import (COMBINED_TEST, COMBINED_WITH_CONTROL_AND_REFERENCE, VALIDATION_RATES_FILE,
                                             PartitionVerdict, items_shape, rate_key)


@dataclass(frozen=True)
class CountedRate:
    """``flagged`` of ``k`` partitions, with the exact (Clopper–Pearson) interval of the rate."""

    flagged: int
    k: int
    rate: float
    confidence_interval: ConfidenceInterval

    def text(self) -> str:
        ci = self.confidence_interval
        return f"{self.flagged}/{self.k} = {100 * self.rate:.0f} % (95 % CI {100 * ci.low:.0f}–{100 * ci.high:.0f} %)"


@dataclass(frozen=True)
class DetectionRate:
    """One verdict method's rates in the validation study: detection, and false positives beside it."""

    key: str
    detection: CountedRate | None
    false_positive_held_out: CountedRate | None
    false_positive_clean: CountedRate | None
    strength: str  # e.g. "lr 5e-05, 3 epochs, 15 % share"
    command: str
    date: str
    detection_by_shape: Mapping[str, CountedRate] = field(default_factory=dict)  # e.g. "multiple choice" -> rate
    items: int | None = None  # the study's items per partition (design ``rows_per_partition``)

    def text(self) -> str:
        """E.g. ``detects 5/8 = 62 % (95 % CI 24–91 %) at the papers' strength (lr 5e-05, 3 epochs, 15 % share)``."""
        found = f"detects {self.detection.text()}" if self.detection else "detection not measured"
        return f"{found} at the papers' strength ({self.strength}), on the default model"


def _counted(entry: Any, confidence_level: float) -> CountedRate | None:
    if entry is None:
        return None
    low, high = entry["ci"]
    return CountedRate(int(entry["flagged"]), int(entry["k"]), float(entry["rate"]),
                       ConfidenceInterval(float(low), float(high), confidence_level))


def parse_detection(document: Mapping[str, Any], source: str = "validation rates") -> dict[str, DetectionRate]:
    """The ``methods`` of a validation rates document, keyed as :func:`lm_eval_contam.verdicts.verdict.rate_key`."""
    level = float(document.get("confidence_level", 0.95))
    design = document.get("design") or {}
    found = {}
    for key, entry in (document.get("methods") or {}).items():
        try:
            strength = (f"lr {float(design['learning_rate']):g}, {int(design['epochs'])} epochs, "
                        f"{100 * float(design['share']):.0f} % share")
            shapes = {shape: counted for shape, rates in (entry.get("by_shape") or {}).items()
                      if (counted := _counted(rates.get("detection"), level)) is not None}
            found[key] = DetectionRate(key, _counted(entry.get("detection"), level),
                                       _counted(entry.get("false_positive_held_out"), level),
                                       _counted(entry.get("false_positive_clean"), level), strength,
                                       str(entry.get("command") or document["command"]),
                                       str(entry.get("date") or document["date"]), shapes,
                                       int(design["rows_per_partition"]) if "rows_per_partition" in design else None)
        except (AttributeError, KeyError, TypeError, ValueError) as error:  # AttributeError: a by_shape no mapping
            raise ContamError(f"not a validation rate ({type(error).__name__}: {error})", source=source,
                              field=f"methods.{key}") from None
    return found


@functools.lru_cache(maxsize=1)
def shipped_detection() -> dict[str, DetectionRate]:
    """The rates shipped with the package; empty when the study has not been run."""
    if not VALIDATION_RATES_FILE.is_file():
        return {}
    return parse_detection(json.loads(VALIDATION_RATES_FILE.read_text(encoding="utf-8")), str(VALIDATION_RATES_FILE))


def measured_detection(verdict: Verdict, rates: Mapping[str, DetectionRate] | None = None) -> DetectionRate | None:
    """The validation study's rates for this verdict's method (None: not measured)."""
    return (shipped_detection() if rates is None else rates).get(rate_key(verdict))


def partition_shape(row: PartitionVerdict) -> str:
    """The study shape a partition verdict's evidence matches: the shape its verdicts carry (the card's, or their
    tests', :func:`~lm_eval_contam.verdicts.verdict.model_verdicts`), else :func:`~lm_eval_contam.verdicts.verdict.items_shape` over
    the tests driving it or shown beside it over their level."""
    evidence = [*(verdict for verdict, _ in row.evidence), *row.over_level]
    return next((verdict.shape for verdict in evidence if verdict.shape), None) or items_shape(evidence)


def compared_items(row: PartitionVerdict) -> int | None:
    """The items a side its tests against a control compared: the largest such test's smaller side (half its n where
    its sides were not counted), as the rates a control verdict quotes are read at its smaller side; None: none."""
    sides = [min(verdict.sides) if verdict.sides else verdict.n // 2 for verdict, _ in row.evidence
             if verdict.n and verdict.test in controlled_tests()]
    return max(sides, default=None)


def nearest_size(sizes: Iterable[int], items: int) -> int:
    """The measured size nearest ``items`` (the larger on a tie): the one whose rates a verdict quotes."""
    return min(sizes, key=lambda size: (abs(size - items), -size))


def clean_bill(row: PartitionVerdict, rates: Mapping[str, DetectionRate] | None = None, *,
               short: bool = False) -> str:
    """What a "not flagged" is worth: how often the verdict that was computed (with a control, or without one)
    found contamination put there at the papers' strength, on partitions of the same shape where measured, at the
    measured size nearest the items it compared (the validation study's partitions, or the split study's whole
    audit, :func:`whole_audit_detection`), that size stated. ``short``: for a table cell."""
    kind = row.setting
    whole = whole_audit_detection(row, rates)
    if whole is not None:
        if short:
            return f"finds {whole.flagged}/{whole.k} at papers' strength, {WHOLE_AUDIT_ITEMS} a side ({kind})"
        return (f"at the papers' injection strength this verdict ({kind}) finds {whole.flagged} of {whole.k} injected "
                f"{partition_shape(row)} partitions audited whole at {WHOLE_AUDIT_ITEMS} items a side (the split study)")
    found = measured_detection(row.as_verdict(), rates)
    if found is None or found.detection is None:
        return (f"detection ({kind}): not measured" if short else
                f"detection of this verdict ({kind}) at the papers' injection strength not measured")
    shape = partition_shape(row)
    detected = found.detection_by_shape.get(shape)
    if detected is None and found.detection_by_shape:  # measured on other shapes only: their number is not this one's
        return (f"detection ({kind}): not measured on {shape}" if short else
                f"detection of this verdict ({kind}) on {shape} partitions at the papers' injection strength not "
                "measured")
    counted, where = (detected, f" {shape} partitions") if detected else (found.detection, " partitions")
    if short:
        return f"finds {counted.flagged}/{counted.k} at papers' strength ({kind})"
    measured = f" of {found.items} items" if found.items else ""
    return (f"at the papers' injection strength this verdict ({kind}) finds {counted.flagged} of {counted.k} "
            f"injected{where}{measured}")


# The split study's whole audit (nullstudy/split_audit): its 4 datasets of each shape audited at 96 items a side, the
# partition verdict of each setting it ran under its audit's label in the shipped rates (per shape, its key).
WHOLE_AUDIT_ITEMS = 96
WHOLE_AUDIT_KEYS = {"multiple choice": "audit_96", "free text": "audit_96_free_text"}
WHOLE_AUDIT_HOLM_SETS_KEY = "audit_96_holm_sets"  # shape -> combined verdict -> the tests its Holm set held there
WHOLE_AUDITS = {COMBINED_TEST: "injected", COMBINED_WITH_CONTROL_AND_REFERENCE: "injected_with_reference"}
# Each setting's audits of models that saw both splits of a pair alike, and those pairs' roles: the injected fine-tune's
# siblings (``test`` vs ``extra``), and both pairs of the clean model and of the filler-only fine-tune.
WHOLE_AUDIT_NULLS = {COMBINED_TEST: {"injected": ("sibling",), "clean": ("detection", "sibling"),
                                     "filler": ("detection", "sibling")},
                     COMBINED_WITH_CONTROL_AND_REFERENCE: {"injected_with_reference": ("sibling",),
                                                           "filler_with_reference": ("detection", "sibling")}}


def _whole_audits(row: PartitionVerdict, rates: Mapping[str, DetectionRate] | None) -> Mapping[str, Any] | None:
    """The split study's whole audits of this verdict's shape, where their 96 items a side are the measured size
    nearest the items this verdict compared (among the validation study's partitions, where it measured this verdict,
    and the split-control study's sizes of this shape); None otherwise."""
    shape = partition_shape(row)
    items, key = compared_items(row), WHOLE_AUDIT_KEYS.get(shape)
    if items is None or key is None:
        return None
    validation = measured_detection(row.as_verdict(), rates)
    sizes = {WHOLE_AUDIT_ITEMS, *(int(size) for shapes in _split_control_rates().values()
                                  for size in (shapes.get(shape) or {})),
             *([validation.items] if validation is not None and validation.items else [])}
    if nearest_size(sizes, items) != WHOLE_AUDIT_ITEMS:
        return None
    return _split_control_document().get(key) or {}


def whole_audit_detection(row: PartitionVerdict,
                          rates: Mapping[str, DetectionRate] | None = None) -> CountedRate | None:
    """The split study's whole-audit detection of this partition verdict (its calls on the injected partitions), where
    that audit measured this setting on this shape at the size it quotes (:func:`_whole_audits`); None otherwise."""
    label, audits = WHOLE_AUDITS.get(row.test), _whole_audits(row, rates)
    if label is None or audits is None:
        return None
    entry = ((audits.get(label) or {}).get(row.test) or {}).get("detection")
    return _counted(entry["called"], 0.95) if entry else None


def whole_audit_false_positives(row: PartitionVerdict,
                                rates: Mapping[str, DetectionRate] | None = None) -> CountedRate | None:
    """The split study's whole-audit false positives of this partition verdict: its calls on the null pairs of the
    audits of its setting (:data:`WHOLE_AUDIT_NULLS`), pooled, at the size it quotes (:func:`_whole_audits`); None
    where none was shipped."""
    audits = _whole_audits(row, rates)
    entries = [entry["called"] for label, roles in WHOLE_AUDIT_NULLS.get(row.test, {}).items() for role in roles
               if audits and (entry := ((audits.get(label) or {}).get(row.test) or {}).get(role))]
    if not entries:
        return None
    flagged, k = sum(int(entry["flagged"]) for entry in entries), sum(int(entry["k"]) for entry in entries)
    return CountedRate(flagged, k, flagged / k, ConfidenceInterval(*binomial_interval(flagged, k), 0.95))


def whole_audit_other_tests(row: PartitionVerdict, rates: Mapping[str, DetectionRate] | None = None
                            ) -> tuple[str, ...] | None:
    """The tests the split study's whole audits held in this verdict's Holm set, where their rates are quoted for it
    (:func:`_whole_audits`) and this verdict holds other tests (its own Holm set is then larger or smaller, and so is
    what it finds); None where the sets agree or none is quoted."""
    if _whole_audits(row, rates) is None:
        return None
    held = ((_split_control_document().get(WHOLE_AUDIT_HOLM_SETS_KEY) or {}).get(partition_shape(row)) or {}).get(
        row.test)
    if not held or sorted(rate_key(verdict) for verdict, _ in row.evidence) == sorted(held):
        return None
    return tuple(held)


ADJUSTMENTS_KEY = "benchmark_adjustments"  # lm_eval_contam.nullstudy.validation.RATES_KEY (the reordered pass's)


def reordered_gap_note(document: Mapping[str, Any] | None = None) -> str | None:
    """What the gap's interval is worth, as the validation study measured it (``benchmark_adjustments``): how often it
    lay above 0 on partitions the clean default model and the filler-only fine-tune never saw (false positives), and
    on injected ones at the papers' strength (detection). None when not measured."""
    if document is None:
        document = json.loads(VALIDATION_RATES_FILE.read_text(encoding="utf-8")) if VALIDATION_RATES_FILE.is_file() else {}
    entry = (document.get(ADJUSTMENTS_KEY) or {}).get("acc_reordered_gap")
    if not entry:
        return None
    level = float(document.get("confidence_level", 0.95))
    parts = [f"{what} {counted.text()}" for column, what in (
        ("false_positive_clean", "on never-seen partitions, clean default model:"),
        ("false_positive_filler", "filler-only fine-tune:"),
        ("false_positive_held_out", "held-out siblings of injected partitions:"),
        ("detection", "injected partitions at the papers' strength:"))
        if (counted := _counted(entry.get(column), level)) is not None]
    k = (entry.get("design") or {}).get("reorderings")
    return (f"The gap's 95 % interval lay above 0 in the validation study ({entry.get('date')}"
            f"{f', K = {k}' if k else ''}): " + "; ".join(parts) + ".")


# The split-control study's rates (scripts/split_control_study.py; lm_eval_contam/nullstudy/split_control.py).
SPLIT_CONTROL_RATES_FILE = Path(__file__).with_name("split_control_rates.json")


@functools.lru_cache(maxsize=1)
def _split_control_document() -> dict[str, Any]:
    if not SPLIT_CONTROL_RATES_FILE.is_file():
        return {}
    return dict(json.loads(SPLIT_CONTROL_RATES_FILE.read_text(encoding="utf-8")))


def _split_control_rates() -> dict[str, Any]:
    return dict(_split_control_document().get("tests") or {})


def split_control_measured_size(test: str, shape: str, items_per_side: int) -> int | None:
    """The items a side the split-control study measured ``test`` on ``shape`` partitions at nearest
    ``items_per_side`` (the larger on a tie); None where not measured."""
    sizes = (_split_control_rates().get(test) or {}).get(shape) or {}
    if not sizes:
        return None
    return nearest_size((int(size) for size in sizes), items_per_side)


def split_control_detection(test: str, shape: str, items_per_side: int) -> str | None:
    """What the split-control study measured for ``test`` on ``shape`` partitions at the measured size nearest
    ``items_per_side`` (its seeded draw: the verdict the audit computes), in words; None where not measured."""
    nearest = split_control_measured_size(test, shape, items_per_side)
    if nearest is None:
        return None
    entry = _split_control_rates()[test][shape][str(nearest)]
    found, false = entry["detection"]["seeded"], entry["false_positive_held_out"]["seeded"]
    # the filler-only fine-tune (where shipped): the same recipe without the injection, both pairs of each dataset
    filler = (entry.get("false_positive_filler") or {}).get("seeded")
    also = (f" and {filler['flagged']:g} of {filler['k']} pairs on a filler-only fine-tune of the same recipe"
            if filler else "")
    return (f"at {nearest} items a side (the measured size nearest {items_per_side}) the split-control study found "
            f"{found['flagged']:g} of {found['k']} {shape} partitions injected at the papers' strength, and flagged "
            f"{false['flagged']:g} of {false['k']} never-injected siblings{also}")
