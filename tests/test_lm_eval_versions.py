"""One task per family end to end on the installed lm-eval; CI runs this module on lm-eval 0.4.13 and on 0.5.

Time Travel, DCQ in both answer modes, a DCR sheet with the ``acc_adj`` hook and a likelihood mode run through
``lm_eval.simple_evaluate`` on the tiny offline model. Every per-doc record is recomputed from the logged
responses, and every partition statistic from the logged records, with the methods' pure functions: a version
that builds requests, routes results or aggregates differently fails here, not in a user's run.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import lm_eval
import pytest

from lm_eval_contam.core.text import rouge_l_f
from lm_eval_contam.harness import post_process, task_manager
from lm_eval_contam.lmeval.lm_eval_compat import (
    LM_EVAL_05,
    logged_responses,
    rolling_loglikelihood,
    selected_task_configs,
    task_index,
)
from lm_eval_contam.lmeval.request_parts import swap_prompt
from lm_eval_contam.methods.dcq.quiz import LETTERS, parse_answer
from lm_eval_contam.methods.dcq.task import (
    ANSWER_METRICS,
    CHANCE_METRICS,
    ESTIMATE_METRICS,
    RECORD_METRICS,
    answers_record,
    argmax_letter,
    partition_answers,
    partition_chance_test,
    partition_estimate,
)
from lm_eval_contam.methods.dcr import dcr_factor
from lm_eval_contam.methods.dcr.fuzzy import adjust
from lm_eval_contam.methods.timetravel.judge import classify_match
from lm_eval_contam.methods.timetravel.task import (
    PARTITION_METRICS,
    STATISTIC_READERS,
    BootstrapOptions,
    partition_statistics,
)

TIME_TRAVEL = "timetravel_toy_news_train"
DCQ_GENERATE, DCQ_LOGLIKELIHOOD = "dcq_toy_news_train", "dcq_toy_news_train_ll"
DCR_GROUP, DCR_BENCHMARK = "dcr_toy_sentiment", "contam_toy_sentiment"
LIFT = "likelihood_toy_news_train_lift"
LIMIT = 2


def by_task(rows: dict[str, Any]) -> dict[str, Any]:
    """Results/samples keyed by bare task name (lm-eval 0.5 keys a group's subtasks ``group::task``)."""
    return {name.rpartition("::")[2]: row for name, row in rows.items()}


@pytest.fixture(scope="module")
def run(tiny_model_dir) -> dict[str, Any]:
    results = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={tiny_model_dir},dtype=float32",
        tasks=[TIME_TRAVEL, DCQ_GENERATE, DCQ_LOGLIKELIHOOD, DCR_GROUP, DCR_BENCHMARK, LIFT],
        task_manager=task_manager(),
        device="cpu",
        batch_size=4,
        limit=LIMIT,
        log_samples=True,
        bootstrap_iters=1000,  # lm-eval's own standard errors only; the methods' statistics are not bootstrapped
    )
    results = post_process(results)
    return {"results": by_task(results["results"]), "samples": by_task(results["samples"])}


def test_installed_version_is_the_one_the_adapter_assumes() -> None:
    assert LM_EVAL_05 == version("lm_eval").startswith("0.5")


def test_task_index() -> None:
    manager = task_manager()
    index = task_index(manager)
    assert index[TIME_TRAVEL].cfg["output_type"] == "generate_until"
    assert index[DCQ_LOGLIKELIHOOD].cfg["output_type"] == "loglikelihood"
    assert index[DCR_GROUP].cfg["task"] == [f"dcr_toy_sentiment_l{level}" for level in (1, 2, 3, 4)]
    selected = selected_task_configs(manager, [DCR_GROUP, TIME_TRAVEL])
    assert sorted(selected) == [*(f"dcr_toy_sentiment_l{level}" for level in (1, 2, 3, 4)), TIME_TRAVEL]


@pytest.mark.slow
def test_time_travel(run) -> None:
    metrics, samples = run["results"][TIME_TRAVEL], run["samples"][TIME_TRAVEL]
    assert len(samples) == LIMIT
    for sample in samples:
        doc = sample["doc"]
        guided_ctx, general_ctx = (arguments[0] for arguments in sample["arguments"])
        assert general_ctx == swap_prompt(guided_ctx, doc["guided_prompt"], doc["general_prompt"])
        assert sample["target"] == doc["reference"]
        guided, general = (reply.strip() for reply in logged_responses(sample))
        record = {"guided": rouge_l_f(doc["reference"], guided), "general": rouge_l_f(doc["reference"], general),
                  "match": classify_match(doc["reference"], guided)}
        assert sample["rougeL_guided"] == record["guided"] and sample["rougeL_general"] == record["general"]
        assert all(sample[metric] == record for metric in PARTITION_METRICS)
    statistics = partition_statistics([sample["alg1_pvalue"] for sample in samples],
                                      BootstrapOptions(paired=True, n_resamples=10_000, seed=0))
    for metric in PARTITION_METRICS:
        assert metrics[f"{metric},none"] == STATISTIC_READERS[metric](statistics), metric
        assert metrics[f"{metric}_stderr,none"] == "N/A", metric
    assert metrics["rougeL_guided,none"] == sum(sample["rougeL_guided"] for sample in samples) / LIMIT
    assert isinstance(metrics["rougeL_guided_stderr,none"], float)


def _check_dcq(metrics: dict[str, Any], samples: list[dict[str, Any]], letters_of) -> None:
    assert len(samples) == LIMIT
    records = []
    for sample in samples:
        assert sample["target"] == "E A B C D"
        record = answers_record(letters_of(logged_responses(sample)))
        assert all(sample[metric] == record for metric in RECORD_METRICS)
        records.append(record)
    estimate, chance = partition_estimate(records, 0.95), partition_chance_test(records, seed=0)
    for metric, read in ESTIMATE_METRICS.items():
        assert metrics[f"{metric},none"] == read(estimate) and metrics[f"{metric}_stderr,none"] == "N/A", metric
    for metric, read in CHANCE_METRICS.items():
        assert metrics[f"{metric},none"] == read(chance) and metrics[f"{metric}_stderr,none"] == "N/A", metric
    answers = partition_answers(records)
    for metric, read in ANSWER_METRICS.items():
        assert metrics[f"{metric},none"] == read(answers) and metrics[f"{metric}_stderr,none"] == "N/A", metric
    bdq_letters = [record["bdq"] for record in records]
    for letter in LETTERS:
        assert metrics[f"dcq_bdq_{letter},none"] == bdq_letters.count(letter) / LIMIT


@pytest.mark.slow
def test_dcq_generate(run) -> None:
    samples = run["samples"][DCQ_GENERATE]
    assert [len(sample["arguments"]) for sample in samples] == [5] * LIMIT
    assert all(arguments[0].endswith("ANSWER:\n") for sample in samples for arguments in sample["arguments"])
    _check_dcq(run["results"][DCQ_GENERATE], samples, lambda replies: [parse_answer(reply) for reply in replies])


@pytest.mark.slow
def test_dcq_loglikelihood(run) -> None:
    samples = run["samples"][DCQ_LOGLIKELIHOOD]
    assert [[arguments[1] for arguments in sample["arguments"][:5]] for sample in samples] == [
        [" A", " B", " C", " D", " E"]] * LIMIT

    def letters(responses: list[list[Any]]) -> list[str]:
        loglikelihoods = [loglikelihood for loglikelihood, _is_greedy in responses]
        return [argmax_letter(loglikelihoods[q * 5:(q + 1) * 5]) for q in range(5)]

    _check_dcq(run["results"][DCQ_LOGLIKELIHOOD], samples, letters)
    assert run["results"][DCQ_LOGLIKELIHOOD]["dcq_unparseable,none"] == 0.0


@pytest.mark.slow
def test_dcr_levels_and_acc_adj(run) -> None:
    results = run["results"]
    for level in (1, 2, 3, 4):
        assert len(run["samples"][f"dcr_toy_sentiment_l{level}"]) == LIMIT
    group = results[DCR_GROUP]
    scores = [group[f"s{level},none"] for level in (1, 2, 3, 4)]
    assert group["dcr_factor,none"] == dcr_factor(scores)
    benchmark = results[DCR_BENCHMARK]
    assert benchmark["dcr_factor,none"] == group["dcr_factor,none"]
    adjusted = adjust(benchmark["acc,none"], benchmark["dcr_factor,none"])
    assert benchmark["acc_adj,none"] == pytest.approx(adjusted, rel=1e-12)
    assert isinstance(benchmark["acc_stderr,none"], float)


@pytest.mark.slow
def test_likelihood_lift(run) -> None:
    metrics, samples = run["results"][LIFT], run["samples"][LIFT]
    assert [len(sample["arguments"]) for sample in samples] == [4] * LIMIT
    assert metrics["lift_own,none"] == sum(sample["lift_own"]["own_lift"] for sample in samples) / LIMIT
    assert metrics["lift_pvalue_stderr,none"] == "N/A"


@pytest.mark.parametrize(("logged", "responses"), [
    ({"filtered_resps": ["reply one", "reply two"]}, ["reply one", "reply two"]),  # 0.4 generate_until
    ({"filtered_resps": [["reply one"], ["reply two"]]}, ["reply one", "reply two"]),  # 0.5 generate_until
    ({"filtered_resps": [[-1.5, False], [-0.5, True]]}, [[-1.5, False], [-0.5, True]]),  # 0.4 loglikelihood
    ({"filtered_resps": [[[-1.5, False]], [[-0.5, True]]]}, [[-1.5, False], [-0.5, True]]),  # 0.5 loglikelihood
    ({"filtered_resps": [-7.25]}, [-7.25]),  # 0.4 loglikelihood_rolling
    ({"filtered_resps": [[[-7.25, False]]]}, [[-7.25, False]]),  # 0.5 loglikelihood_rolling
])
def test_samples_files_of_either_version_read_the_same(logged, responses) -> None:
    assert logged_responses(logged) == responses


def test_rolling_results_of_either_version() -> None:
    assert rolling_loglikelihood(-7.25) == rolling_loglikelihood((-7.25, False)) == -7.25
