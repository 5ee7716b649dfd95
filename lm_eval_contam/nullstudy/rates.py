"""False-positive rates with exact (Clopper–Pearson) intervals, the shipped rates file and the README table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from scipy import stats as scipy_stats

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.method_verdict import Verdict
from lm_eval_contam.core.stats import ConfidenceInterval, Estimate
from lm_eval_contam.nullstudy.design import NULL_ROLES, ROLE_NAMES, ROLE_NULLS, Role
from lm_eval_contam.verdicts.verdict import rate_key

RATES_VERSION = 1


def clopper_pearson(successes: int, trials: int, confidence_level: float = 0.95) -> ConfidenceInterval:
    """The exact binomial interval: beta quantiles, [0, ·] at 0 successes and [·, 1] at ``trials``."""
    if trials < 1 or not 0 <= successes <= trials:
        raise ContamError(f"need 0 <= successes <= trials and trials >= 1, got {successes}/{trials}", field="trials")
    tail = (1.0 - confidence_level) / 2.0
    low = 0.0 if successes == 0 else float(scipy_stats.beta.ppf(tail, successes, trials - successes + 1))
    high = 1.0 if successes == trials else float(scipy_stats.beta.ppf(1 - tail, successes + 1, trials - successes))
    return ConfidenceInterval(low, high, confidence_level)


@dataclass(frozen=True)
class FlagRate(Estimate):
    """The share of partitions a verdict flagged (``statistic``), with its Clopper–Pearson interval."""

    flagged: int
    k: int  # partitions with a decision


def flag_rate(flagged: int, k: int, confidence_level: float = 0.95) -> FlagRate:
    return FlagRate(flagged / k, clopper_pearson(flagged, k, confidence_level), flagged, k)


@dataclass(frozen=True)
class VerdictRates:
    """One test's flag rates (a verdict's rate key): per partition role, and pooled over the null roles."""

    key: str  # verdict.rate_key: the test, and the prompt style where there is one
    title: str
    null: str  # the verdict's own null hypothesis
    by_role: Mapping[Role, FlagRate]

    @property
    def pooled_null(self) -> FlagRate | None:
        present = [self.by_role[role] for role in NULL_ROLES if role in self.by_role]
        if not present:
            return None
        return flag_rate(sum(r.flagged for r in present), sum(r.k for r in present))


def tally(labelled: Iterable[tuple[Verdict, Role]]) -> list[VerdictRates]:
    """Flag rates per test and role, over the verdicts that decide (``flagged`` not None)."""
    counts: dict[str, dict[Role, list[bool]]] = {}
    first: dict[str, Verdict] = {}
    for verdict, role in labelled:
        if verdict.flagged is None:
            continue
        key = rate_key(verdict)
        first.setdefault(key, verdict)
        counts.setdefault(key, {}).setdefault(role, []).append(bool(verdict.flagged))
    return [VerdictRates(key, first[key].title, first[key].null,
                        {role: flag_rate(sum(flags), len(flags)) for role, flags in counts[key].items()})
            for key in counts]


def _interval(ci: ConfidenceInterval | None) -> list[float] | None:
    return None if ci is None else [round(ci.low, 4), round(ci.high, 4)]


def rates_document(found: Sequence[VerdictRates], *, command: str, date: str, design: Mapping[str, object],
                   wall_seconds: float) -> dict[str, object]:
    """The shipped rates file: rate key (the test) -> {k, false_positives, rate, ci, command, date, ...}."""
    methods = {}
    for rates in found:
        pooled = rates.pooled_null
        if pooled is None:
            continue
        methods[rates.key] = {
            "title": rates.title, "k": pooled.k, "false_positives": pooled.flagged,
            "rate": round(pooled.statistic, 4), "ci": _interval(pooled.confidence_interval),
            "null": "; ".join(ROLE_NULLS[role] for role in NULL_ROLES if role in rates.by_role),
            "by_null": {role: {"k": r.k, "false_positives": r.flagged, "rate": round(r.statistic, 4),
                               "ci": _interval(r.confidence_interval)}
                        for role, r in rates.by_role.items() if role in NULL_ROLES},
            "command": command, "date": date,
        }
    return {"version": RATES_VERSION, "confidence_level": 0.95, "design": dict(design),
            "wall_seconds": round(wall_seconds, 1), "methods": methods}


def _percent(value: float) -> str:
    return f"{100 * value:.1f} %"


def markdown_table(found: Sequence[VerdictRates], *, wall_seconds: float, command: str) -> str:
    """One row per test and partition role (the injected role reads as a detection rate)."""
    lines = ["| method | verdict | null partitions | K | flagged | rate | 95 % CP interval |",
             "|---|---|---|---|---|---|---|"]
    for rates in found:
        rows = [(ROLE_NAMES[role], rates.by_role[role]) for role in (*NULL_ROLES, "injected") if role in rates.by_role]
        pooled = rates.pooled_null
        if pooled is not None and sum(role in rates.by_role for role in NULL_ROLES) > 1:
            rows.insert(2, ("all null partitions", pooled))
        for name, rate in rows:
            ci = rate.confidence_interval
            lines.append(f"| {rates.title} | `{rates.key}` | {name} | {rate.k} | {rate.flagged} | "
                         f"{_percent(rate.statistic)} | [{_percent(ci.low)}, {_percent(ci.high)}] |")
    minutes, seconds = divmod(round(wall_seconds), 60)
    return "\n".join(lines) + f"\n\nWall time {minutes} min {seconds:02d} s: `{command}`\n"
