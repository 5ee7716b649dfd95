"""Every task family against a real OpenAI-compatible server: ``transformers serve`` on 127.0.0.1.

The server serves the embedded default model (SmolLM2-135M-Instruct), because the DCQ
check needs an instruct model that answers the quiz with a letter; an untrained tiny
model would send back arbitrary tokens. One server per module; it is stopped by the
fixture's finalizer and, should pytest itself die, by ``timeout`` after SERVER_LIFETIME_S.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from lm_eval_contam import harness
from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.cli.run import _with_hook
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.lmeval.request_parts import API_STOP, with_api_stop
from lm_eval_contam.methods.timetravel.judge import MATCH_CLASSES, parse_judge_b_match

SERVER_LIFETIME_S = 900
READY_TIMEOUT_S = 180
TIMETRAVEL_MAX_GEN_TOKS = 8
DCR_MAX_GEN_TOKS = 16
DCQ_LETTERS = {"A", "B", "C", "D", "E"}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@pytest.fixture(scope="module")
def server(default_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``http://127.0.0.1:<port>/v1`` of a running ``transformers serve`` with the default model preloaded."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("serve") / "serve.log"
    command = ["timeout", "--kill-after=10", str(SERVER_LIFETIME_S),
               sys.executable, "-m", "transformers.cli.transformers", "serve", str(default_model_dir),
               "--host", "127.0.0.1", "--port", str(port), "--device", "cpu", "--log-level", "warning"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not _healthy(f"http://127.0.0.1:{port}/health"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"transformers serve did not come up:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def chat_model_args(model_dir: Path, base: str) -> str:
    return f"model={model_dir},base_url={base}/chat/completions,num_concurrent=1,max_retries=1"


def _samples(run_dir: Path, task: str) -> list[dict]:
    (path,) = run_dir.rglob(f"samples_{task}_*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def audit(server: str, default_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """``lm-eval-contam audit --model local-chat-completions:… --judge-model local-chat-completions:…``, two docs per task.

    Two, not one: Time Travel's Alg. 1 tests need at least two paired scores.
    """
    spec = f"local-chat-completions:{chat_model_args(default_model_dir, server)}"
    out = tmp_path_factory.mktemp("chat_audit")
    assert cli_main(["audit", "--model", spec, "--label", "chat_api", "--partitions", "toy_news:train",
                     "--dcq-mode", "generate", "--limit", "2", "--max_gen_toks", str(TIMETRAVEL_MAX_GEN_TOKS),
                     "--judge-model", spec, "--output_path", str(out)]) == 0
    (model,) = json.loads((out / "audit.json").read_text())["models"]
    return out, model


def test_audit_of_a_chat_api_runs_instruct_time_travel_and_dcq_generate(audit: tuple[Path, dict]) -> None:
    out, model = audit
    # A chat API cannot continue plain text: the instruct style only; DCQ in generate mode.
    assert (model["label"], model["model"]) == ("chat_api", "local-chat-completions")
    assert model["tasks"] == ["timetravel_toy_news_train", "dcq_toy_news_train"]
    assert "chat_api" in (out / "report.md").read_text()


def test_timetravel_sends_both_prompts_as_chat_messages_and_scores_both(audit: tuple[Path, dict]) -> None:
    out, model = audit
    samples = _samples(out / model["run_dir"], "timetravel_toy_news_train")
    assert len(samples) == 2
    for sample in samples:
        guided, general = (sample["arguments"][f"gen_args_{i}"] for i in (0, 1))
        # lm-eval logs the JsonChatStr context as a one-item list holding the JSON messages.
        guided_messages, general_messages = (json.loads(arguments["arg_0"][0]) for arguments in (guided, general))
        assert [m["role"] for m in guided_messages] == [m["role"] for m in general_messages] == ["user"]
        assert guided_messages[0]["content"].strip() == sample["doc"]["guided_prompt"].strip()
        assert general_messages[0]["content"].strip() == sample["doc"]["general_prompt"].strip()
        # The task sets no stop string; the requests carry the one every server accepts.
        assert guided["arg_1"]["until"] == general["arg_1"]["until"] == [API_STOP]
        assert all(response[0].strip() for response in sample["resps"])
        record = sample["alg2_contaminated"]
        assert set(record) == {"guided", "general", "match"}
        assert 0.0 <= record["guided"] <= 1.0 and 0.0 <= record["general"] <= 1.0
        assert record["match"] in MATCH_CLASSES


def test_dcq_generate_answers_are_parsed_letters(audit: tuple[Path, dict]) -> None:
    out, model = audit
    samples = _samples(out / model["run_dir"], "dcq_toy_news_train")
    assert len(samples) == 2
    for sample in samples:
        assert len(sample["resps"]) == 5  # the BDQ quiz and the four BCQ quizzes
        assert all(arguments["arg_1"]["until"] == ["\n\n"] for arguments in sample["arguments"].values())
        answers = sample["dcq_max"]
        assert answers["bdq"] in DCQ_LETTERS
        assert set(answers["bcq"]) == {"A", "B", "C", "D"} and set(answers["bcq"].values()) <= DCQ_LETTERS
        assert answers["bdq"] == sample["filtered_resps"][0].strip()[0]
        assert sample["dcq_unparseable"] == 0.0


def test_judge_b_with_an_api_judge_classifies_every_guided_completion(audit: tuple[Path, dict]) -> None:
    out, model = audit
    run_dir = out / model["run_dir"]
    (judge_file,) = run_dir.rglob("samples_timetravel_toy_news_train_*.judge_b.*.json")
    verdicts = json.loads(judge_file.read_text())
    assert verdicts["judge_model"].startswith("local-chat-completions:model=")
    samples = _samples(run_dir, "timetravel_toy_news_train")
    assert [v["candidate"] for v in verdicts["instances"]] == [s["filtered_resps"][0].strip() for s in samples]
    for instance in verdicts["instances"]:
        assert instance["judge_reply"].strip()
        assert instance["judge_b_match"] == parse_judge_b_match(instance["judge_reply"])


def test_dcr_level_runs_through_lm_eval_contam_run_on_the_chat_api(server: str, default_model_dir: Path) -> None:
    from lm_eval.evaluator import simple_evaluate
    from lm_eval.tasks import get_task_dict

    manager = harness.task_manager()
    (dcr,) = get_task_dict(["dcr_toy_sentiment_l1"], manager).values()
    dcr.set_config("generation_kwargs", {"max_gen_toks": DCR_MAX_GEN_TOKS}, update=True)
    results = _with_hook(simple_evaluate, harness.post_process)(
        model="local-chat-completions", model_args=chat_model_args(default_model_dir, server), tasks=[dcr],
        task_manager=manager, apply_chat_template=True, limit=2, log_samples=True)
    samples = results["samples"]["dcr_toy_sentiment_l1"]
    assert len(samples) == 2
    for sample in samples:
        ((context, generation_kwargs),) = sample["arguments"]
        messages = json.loads(context.prompt)  # lm-eval's JsonChatStr
        assert messages == [{"role": "user", "content": sample["doc"]["prompt"]}]
        assert generation_kwargs["until"] == ["\n\n"]
        assert sample["resps"][0][0].strip()
        assert sample["contaminated"] in (0.0, 1.0) and sample["unchecked"] == 0.0
    assert results["results"]["dcr_toy_sentiment_l1"]["contaminated,none"] == (
        sum(sample["contaminated"] for sample in samples) / 2)


def test_loglikelihood_task_on_a_server_without_prompt_logprobs_fails_before_evaluating(
        server: str, default_model_dir: Path) -> None:
    def must_not_run(**kwargs):
        raise AssertionError("simple_evaluate was reached")

    manager = harness.task_manager()
    completions = f"model={default_model_dir},base_url={server}/completions,max_retries=1"
    with pytest.raises(ContamError) as raised:
        _with_hook(must_not_run, harness.post_process)(
            model="local-completions", model_args=completions, tasks=["dcq_toy_news_train_ll"], task_manager=manager)
    message = str(raised.value)
    assert "\n" not in message
    assert f"{server}/completions returns no prompt log-probabilities" in message
    assert "run its generate mode 'dcq_toy_news_train' instead" in message
    with pytest.raises(ContamError, match="LocalChatCompletion cannot score prompts.*'dcq_toy_news_train' instead"):
        _with_hook(must_not_run, harness.post_process)(
            model="local-chat-completions", model_args=chat_model_args(default_model_dir, server),
            tasks=["dcq_toy_news_train_ll"], task_manager=manager)


def test_run_refuses_a_reference_model_on_a_server_without_prompt_logprobs_before_evaluating(
        server: str, default_model_dir: Path) -> None:
    def must_not_run(**kwargs):
        raise AssertionError("simple_evaluate was reached")

    reference = f"local-completions:model={default_model_dir},base_url={server}/completions,max_retries=1"
    with pytest.raises(ContamError) as raised:
        _with_hook(must_not_run, harness.post_process, reference)(
            model="hf", model_args=f"pretrained={default_model_dir}", tasks=["pairing_toy_reviews_test"],
            task_manager=harness.task_manager())
    message = str(raised.value)
    assert "\n" not in message and f"{server}/completions returns no prompt log-probabilities" in message


def test_echoed_prompt_logprobs_reads_the_openai_completions_shape() -> None:
    echoed = {"choices": [{"index": 0, "text": " jumps", "logprobs": {"token_logprobs": [None, -3.1, -0.2, -1.5]}}]}
    assert harness.echoed_prompt_logprobs(echoed)
    assert not harness.echoed_prompt_logprobs({"choices": [{"index": 0, "text": ","}]})  # transformers serve
    assert not harness.echoed_prompt_logprobs({"choices": [{"logprobs": {"token_logprobs": [-0.2]}}]})  # no echo
    assert not harness.echoed_prompt_logprobs({"choices": []})
    assert not harness.echoed_prompt_logprobs(["not", "a", "response"])


def test_api_requests_always_carry_a_stop_string() -> None:
    assert with_api_stop({"until": [], "max_gen_toks": 5}) == {"until": [API_STOP], "max_gen_toks": 5}
    assert with_api_stop({"max_gen_toks": 5}) == {"until": [API_STOP], "max_gen_toks": 5}
    kept = {"until": ["\n\n"], "max_gen_toks": 1}
    assert with_api_stop(kept) is kept


def test_model_spec_takes_lm_eval_api_model_names() -> None:
    spec = ModelSpec.parse("local-chat-completions:model=gpt-4o,base_url=https://api.openai.com/v1/chat/completions")
    assert (spec.backend, spec.model_args) == (
        "local-chat-completions", "model=gpt-4o,base_url=https://api.openai.com/v1/chat/completions")
    with pytest.raises(ContamError, match="is not a name"):
        ModelSpec.parse("-chat:model=x")
