"""Requests longer than the model's window are counted per task and marked on the verdict (issue 14)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TINY_CORPUS

from lm_eval_contam.lmeval.context_window import TRUNCATED_METRIC, count_truncation, model_window, truncated_docs
from lm_eval_contam.lmeval.generation import ModelSpec
from lm_eval_contam.models.tiny_model import build_tiny_model


def test_counts_docs_with_any_request_over_the_window() -> None:
    def count_words(text: str) -> int:
        return len(text.split())

    samples = [
        {"arguments": {"gen_args_0": {"arg_0": "a b c", "arg_1": " d"}}},  # 4 tokens
        {"arguments": {"gen_args_0": {"arg_0": "a b", "arg_1": " c"},
                       "gen_args_1": {"arg_0": "a b c d", "arg_1": " e"}}},  # 5 tokens in its second request
        {"arguments": {"gen_args_0": {"arg_0": "a", "arg_1": {"until": [], "max_gen_toks": 4}}}},  # 1 + 4
        # Rolling requests (lm-eval 0.4, 0.5): scored window by window, every token of them, so never cut.
        {"arguments": {"gen_args_0": {"arg_0": "a b c d e f"}}},
        {"arguments": {"gen_args_0": {"arg_0": "", "arg_1": "a b c d e f"}}},
    ]
    assert truncated_docs(samples, count_words, 4) == 2
    assert truncated_docs(samples, count_words, 5) == 0


def test_window_follows_lm_evals_order() -> None:
    class Config:
        n_positions = 512

    class Tokenizer:
        model_max_length = int(1e30)

    assert model_window(Config(), Tokenizer()) == 512
    assert model_window(object(), Tokenizer()) == 2048  # neither names one: lm-eval's default
    assert model_window(Config(), Tokenizer(), max_length=64) == 64  # model_args' max_length wins


def test_a_quiz_cut_to_a_short_window_is_counted(tmp_path: Path, task_manager_for) -> None:
    import lm_eval

    def run(model_dir: Path) -> dict:
        results = lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={model_dir}",
                                          tasks=["dcq_toy_news_train_ll"], limit=3, log_samples=True,
                                          task_manager=task_manager_for(), device="cpu")
        return count_truncation(results, ModelSpec.parse(str(model_dir)).window)["results"]["dcq_toy_news_train_ll"]

    short = build_tiny_model(tmp_path / "short", TINY_CORPUS, n_positions=96)
    wide = build_tiny_model(tmp_path / "wide", TINY_CORPUS, n_positions=4096)
    assert run(short)[f"{TRUNCATED_METRIC},none"] == 3
    assert run(wide)[f"{TRUNCATED_METRIC},none"] == 0


def test_the_audit_marks_verdicts_on_cut_docs(tmp_path: Path) -> None:
    from lm_eval_contam.audit.job import AuditSettings, run_model
    from lm_eval_contam.core.rundir import load_run
    from lm_eval_contam.verdicts.verdict import collect

    short = build_tiny_model(tmp_path / "short", TINY_CORPUS, n_positions=96)
    settings = AuditSettings(partitions=("toy_news:train",), max_gen_toks=2, batch_size=12, device="cpu",
                             apply_chat_template=False)
    run_model(ModelSpec.parse(str(short)), "short", tmp_path / "audit", settings)
    quiz = next(v for v in collect(load_run(tmp_path / "audit")) if v.family == "dcq")
    # the tiny model answers every quiz D: the quiz's own caveat comes first, the run's cut docs after it
    assert quiz.caveats[1:] == ("12 of 12 docs exceed the model's context window and were cut from the left by "
                                "lm-eval: those instances were scored on part of their text",)
    assert quiz.caveats[0].startswith("the model answered every quiz with the same letter (D, 60 of 60 answers)")


def test_a_continuation_over_the_window_names_the_longest_row_and_how_many_are_over() -> None:
    from lm_eval_contam.lmeval.context_window import ModelWindow

    window = ModelWindow(4, lambda text: text.split())
    assert window.continuation_tokens("a b ", "c d e") == 3
    assert window.over([(0, "q: ", "a b c d"), (2, "q: ", "x")]) is None  # 4 tokens fit a 4-token window
    scored = [(0, "q: ", "a b c d e f"), (2, "q: ", "x"), (5, "q: ", "a b c d e"), (5, "r: ", "a b c d e f g")]
    assert window.over(scored, "'s piece") == "row 5's piece has 7 tokens, over the model's window of 4 (2 rows are)"


def test_continuation_tokens_are_counted_as_lm_evals_hf_backend_counts_them(tiny_model_dir: Path) -> None:
    from lm_eval.models.huggingface import HFLM

    window = ModelSpec.parse(f"hf:pretrained={tiny_model_dir}").window
    assert window is not None and window.tokens == 1024
    lm = HFLM(pretrained=str(tiny_model_dir), device="cpu")
    for context, continuation in [("Question: which season?\nAnswer:", " spring"), ("The quick brown ", "fox jumps"),
                                  ("SECOND PIECE:", " the lazy dog. " * 40)]:
        assert window.continuation_tokens(context, continuation) == len(lm._encode_pair(context, continuation)[1])
    assert ModelSpec.parse("openai-chat-completions:model=gpt-4o").window is None  # an API keeps its window


def test_the_audited_models_tokenizer_and_window_load_once(tiny_model_dir: Path, monkeypatch) -> None:
    """The CLI's model check, the audit's chat-template test, its window before the run and the truncation count after
    it share one tokenizer, kept on the spec."""
    import transformers

    from lm_eval_contam.harness import post_process

    loads: list[str] = []
    original = transformers.AutoTokenizer.from_pretrained
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained",
                        lambda name, *args, **kwargs: loads.append(str(name)) or original(name, *args, **kwargs))
    spec = ModelSpec.parse(str(tiny_model_dir))
    spec.check()
    assert spec.has_chat_template
    assert spec.window.tokens > 0
    results = {"configs": {"t": {"metadata": {"method": "x"}}}, "samples": {"t": []}, "results": {"t": {}}}
    assert post_process(results, spec)["results"]["t"] == {f"{TRUNCATED_METRIC},none": 0}
    assert loads == [str(tiny_model_dir)]


def test_a_run_of_lm_evals_own_tasks_loads_no_tokenizer(monkeypatch) -> None:
    """Nothing to count: the spec's tokenizer is never loaded (an API-less plain benchmark run stays cheap)."""
    from lm_eval_contam.harness import post_process
    from lm_eval_contam.lmeval import generation

    monkeypatch.setattr(generation, "load_local_tokenizer", lambda *args: pytest.fail("loaded a tokenizer"))
    results = {"configs": {"arc_easy": {"metadata": {}}}, "samples": {"arc_easy": []}, "results": {"arc_easy": {}}}
    assert post_process(results, ModelSpec.parse("/no/such/model"))["results"] == {"arc_easy": {}}


def test_the_benchmarks_own_prompts_over_the_window_are_counted_before_the_run() -> None:
    """``audit --tasks`` says before the run how many of a subtask's docs (prompt and longest choice) lm-eval will cut
    to the audited model's window; a subtask whose docs all fit, or a model without a window (an API), says nothing."""
    from lm_eval_contam.audit.job import prompts_over_window
    from lm_eval_contam.lmeval.benchmark_docs import BenchmarkDoc, LoadedBenchmark
    from lm_eval_contam.lmeval.context_window import ModelWindow

    def doc(task: str, index: int, words: int, choices: tuple[str, ...]) -> BenchmarkDoc:
        return BenchmarkDoc(task, index, " ".join(["word"] * words), choices[0] if choices else "", choices,
                            "multiple_choice" if choices else "generate_until")

    docs = {"short_mc": tuple(doc("short_mc", i, 5, ("yes", "no")) for i in range(3)),
            "long_mc": (doc("long_mc", 0, 5, ("yes",)), doc("long_mc", 1, 9, ("a b c", "a")),
                        doc("long_mc", 2, 7, ("a b c d",))),
            "long_gen": (doc("long_gen", 0, 11, ()), doc("long_gen", 1, 3, ()))}
    benchmark = LoadedBenchmark("bench", (), {}, docs)
    window = ModelWindow(10, str.split)  # a word a token
    assert prompts_over_window({"bench": benchmark}, window) == [
        "long_mc: 2 of 3 docs are longer than the audited model's window of 10 tokens (with their longest choice); "
        "lm-eval cuts them from the left, and the verdicts whose samples hold them say so",
        "long_gen: 1 of 2 docs are longer than the audited model's window of 10 tokens (with their longest choice); "
        "lm-eval cuts them from the left, and the verdicts whose samples hold them say so"]
    assert prompts_over_window({"bench": benchmark}, None) == []
