"""Time Travel's verdicts from a run: Alg. 1 (bootstrap; our sign-flip permutation test), Alg. 2 with Judge A, and Alg. 2 with each Judge B.

Read from lm-eval's results (the task's own partition metrics) and logged
samples (the per-instance table); the report only renders them
(``lm_eval_contam.report.methods.timetravel``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.formatting import number, p_equals, pvalue
from lm_eval_contam.core.method_verdict import DRIVES, PAPERS_OWN, Test, Verdict, sample_size_caveats
from lm_eval_contam.core.partitions import Partition, metadata_number
from lm_eval_contam.core.rundir import FILTER, ModelResults
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.lmeval.lm_eval_compat import logged_responses
from lm_eval_contam.methods.timetravel.configs import STYLES
from lm_eval_contam.methods.timetravel.instances import DEFAULT_NUM_INSTANCES
from lm_eval_contam.methods.timetravel.judge_b import judge_a_match, latest_per_judge

FAMILY = "timetravel"
ALG2_RULE = "flagged at >= 1 exact or >= 2 near-exact matches (the paper's Alg. 2)"
ALG2_NULL = "none: a count of replicated instances, not a statistical test"
PERMUTATION_NULL = "guided and general ROUGE-L are exchangeable within each instance"


def styled(rule: str) -> tuple[str, ...]:
    """A rule's rate keys, one per prompt style."""
    return tuple(f"{rule}:{style}" for style in STYLES)


ALG1 = Test(family=FAMILY, name="tt_alg1", title="Time Travel Alg. 1",
            null="guided completions overlap the reference no more than general ones (mean ROUGE-L)",
            rule=f"flagged when the bootstrap p <= {ALPHA} (the paper's Alg. 1, the task's alg1_contaminated)",
            compares=(), role=PAPERS_OWN, rate_keys=styled("tt_alg1"),
            why="Alg. 1's bootstrap rejects more often than its level at the paper's 10 instances")
ALG1_PERMUTATION = Test(family=FAMILY, name="tt_alg1_permutation", title="Time Travel Alg. 1, permutation (ours)",
                        null=PERMUTATION_NULL, rule=f"flagged when the exact sign-flip p <= {ALPHA}", compares=(),
                        role=DRIVES, sign_flip=True, rate_keys=styled("tt_alg1_permutation"))
ALG2_JUDGE_A = Test(family=FAMILY, name="tt_alg2_judge_a", title="Time Travel Alg. 2 (Judge A)", null=ALG2_NULL,
                    rule=ALG2_RULE, compares=(), role=PAPERS_OWN, rate_keys=styled("tt_alg2_judge_a"),
                    why="Alg. 2 counts matches without a test: no level a combination could keep")
JUDGE_B = Test(family=FAMILY, name="tt_judge_b", title="Time Travel Alg. 2 (Judge B)", null=ALG2_NULL, rule=ALG2_RULE,
               compares=(), role=PAPERS_OWN, rated=False, why="Alg. 2 with Judge B counts matches without a test")
STYLES_COMBINED = Test(
    family=FAMILY, name="tt_styles_combined", title="Time Travel, both prompt styles (ours)",
    null=f"in every prompt style, {PERMUTATION_NULL}",
    rule=f"flagged when the Bonferroni-adjusted smallest sign-flip p <= {ALPHA} ({{styles}} styles)", compares=(),
    role=DRIVES)
TESTS = (ALG1, ALG1_PERMUTATION, ALG2_JUDGE_A, JUDGE_B, STYLES_COMBINED)


@dataclass(frozen=True)
class Instance:
    """One Time Travel doc's row in the per-instance table."""

    doc_id: int
    first_piece: str
    reference: str
    guided: str
    general: str
    rouge_guided: float
    rouge_general: float
    judge_a: str  # exact | near_exact | inexact
    judge_b: str | None = None


@dataclass(frozen=True)
class Alg1Evidence:
    rouge_guided: float
    rouge_general: float
    pvalue: float
    instances: tuple[Instance, ...]
    test: str = "bootstrap"  # which test gave ``pvalue``

    def facts(self) -> list[tuple[str, str]]:
        return [("mean ROUGE-L guided", number(self.rouge_guided)),
                ("mean ROUGE-L general", number(self.rouge_general)),
                (f"{self.test} p-value (guided > general)", pvalue(self.pvalue))]

    def summary(self) -> str:
        return p_equals(self.pvalue)


@dataclass(frozen=True)
class Alg2Evidence:
    exact_matches: int
    near_exact_matches: int
    judge_model: str | None  # None: Judge A (deterministic)
    instances: tuple[Instance, ...]

    def facts(self) -> list[tuple[str, str]]:
        facts = [("exact matches", str(self.exact_matches)), ("near-exact matches", str(self.near_exact_matches))]
        return facts + ([("judge model", self.judge_model)] if self.judge_model else [])

    def summary(self) -> str:
        return f"{self.exact_matches} exact, {self.near_exact_matches} near-exact"


def instances(model: ModelResults, task: str, judge_b: dict[int, str] | None = None) -> tuple[Instance, ...]:
    """The per-instance rows of one task, from its logged samples (empty without them)."""
    rows = []
    for sample in model.samples(task):
        try:
            doc = sample["doc"]
            guided, general = (str(reply).strip() for reply in logged_responses(sample)[:2])
            rows.append(Instance(
                doc_id=int(sample["doc_id"]), first_piece=str(doc["first_piece"]), reference=str(doc["reference"]),
                guided=guided, general=general, rouge_guided=float(sample["rougeL_guided"]),
                rouge_general=float(sample["rougeL_general"]), judge_a=judge_a_match(sample),
                judge_b=(judge_b or {}).get(int(sample["doc_id"])),
            ))
        except (KeyError, TypeError, ValueError) as error:
            raise ContamError(f"not a Time Travel sample ({type(error).__name__}: {error})",
                              source=str(model.files[task].samples_file),
                              field="doc_id " + str(sample.get("doc_id"))) from None
    return tuple(sorted(rows, key=lambda row: row.doc_id))


def task_verdicts(model: ModelResults, task: str) -> list[Verdict]:
    """Alg. 1 and Alg. 2 (Judge A) from the task's metrics; Judge B for every judge model that judged it."""
    metadata = model.metadata(task)
    partition = Partition.from_task_metadata(metadata, str(model.config(task).get("test_split"))).label
    n = model.n_instances(task)
    common: dict[str, Any] = {"model": model.label, "partition": partition, "task": task, "n": n,
                              "variant": metadata.get("prompt_style")}
    samples_file = model.files[task].samples_file
    judged = latest_per_judge(samples_file) if samples_file is not None else []
    rows = instances(model, task, {int(entry["doc_id"]): entry.get("judge_b_match")
                                   for entry in judged[-1]["instances"]} if judged else None)
    rouge_guided, rouge_general = model.number(task, "rougeL_guided"), model.number(task, "rougeL_general")
    p = model.number(task, "alg1_pvalue")
    found = [
        ALG1.verdict(flagged=model.number(task, "alg1_contaminated") == 1.0, statistic=rouge_guided - rouge_general,
                     pvalue=p, evidence=Alg1Evidence(rouge_guided, rouge_general, p, rows), **common),
    ]
    # Runs made before the permutation test have no such metric: they keep their published verdicts only.
    if f"alg1_permutation_pvalue,{FILTER}" in model.row(task):
        permutation_p = model.number(task, "alg1_permutation_pvalue")
        found.append(ALG1_PERMUTATION.verdict(
            flagged=permutation_p <= ALPHA, statistic=rouge_guided - rouge_general, pvalue=permutation_p,
            evidence=Alg1Evidence(rouge_guided, rouge_general, permutation_p, rows, test="sign-flip permutation"),
            **common))
    found.append(ALG2_JUDGE_A.verdict(
        flagged=model.number(task, "alg2_contaminated") == 1.0, statistic=None, pvalue=None,
        evidence=Alg2Evidence(int(model.number(task, "exact_matches")), int(model.number(task, "near_exact_matches")),
                              None, rows), **common))
    for verdicts in judged:
        found.append(JUDGE_B.verdict(
            flagged=bool(verdicts["alg2_contaminated"]), statistic=None, pvalue=None,
            evidence=Alg2Evidence(int(verdicts["exact_matches"]), int(verdicts["near_exact_matches"]),
                                  verdicts.get("judge_model"), rows),
            **{**common, "n": len(verdicts["instances"])},
        ))
    # Fewer docs than asked for (a small partition) is said on each verdict; under --limit, run_caveats say why.
    asked = metadata_number(metadata, "num_instances", DEFAULT_NUM_INSTANCES, minimum=1)
    smaller = sample_size_caveats(asked, n) if model.limit is None else ()
    return [replace(verdict, caveats=smaller + verdict.caveats) for verdict in found]


@dataclass(frozen=True)
class StylesEvidence:
    """Both prompt styles' permutation p-values for one partition, combined by Bonferroni."""

    pvalues: tuple[tuple[str, float], ...]  # (prompt style, sign-flip p)
    adjusted: float
    instances: tuple[Instance, ...] = ()  # per-instance rows live with each style's own task

    def facts(self) -> list[tuple[str, str]]:
        return [*((f"sign-flip p, {style} prompts", pvalue(p)) for style, p in self.pvalues),
                (f"Bonferroni-adjusted p (min p × {len(self.pvalues)})", pvalue(self.adjusted))]

    def summary(self) -> str:
        return p_equals(self.adjusted)


def styles_combined(found: list[Verdict]) -> list[Verdict]:
    """One verdict per partition audited in several prompt styles: the smallest permutation p, Bonferroni-adjusted.

    A chat model may replicate memorised text only when it is asked to continue plain text (the completion
    style) or only when instructed; the audit runs both, and this keeps the family-wise level at 0.05.
    """
    by_partition: dict[tuple[str, str], list[Verdict]] = {}
    for verdict in found:
        if verdict.test == "tt_alg1_permutation":
            by_partition.setdefault((verdict.model, verdict.partition), []).append(verdict)
    combined = []
    for (model, partition), styles in by_partition.items():
        if len({v.variant for v in styles}) < 2:
            continue
        pvalues = tuple((str(v.variant), float(v.pvalue)) for v in styles)
        adjusted = min(1.0, len(pvalues) * min(p for _, p in pvalues))
        combined.append(STYLES_COMBINED.verdict(
            model=model, partition=partition, task=" + ".join(v.task for v in styles),
            flagged=adjusted <= ALPHA, statistic=None, pvalue=adjusted,
            n=min(v.n for v in styles if v.n is not None) if any(v.n is not None for v in styles) else None,
            styles=str(len(pvalues)),
            evidence=StylesEvidence(pvalues, adjusted)))
    return combined


def verdicts(model: ModelResults) -> list[Verdict]:
    found = [verdict for task in model.tasks_of(FAMILY) for verdict in task_verdicts(model, task)]
    return found + styles_combined(found)
