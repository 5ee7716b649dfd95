"""Injection formats (byte-exact, from the papers) and corpus mixing."""

from __future__ import annotations

import json

import pytest

from lm_eval_contam.contaminate import (
    InjectionSettings,
    build_corpus,
    dcr_data_format,
    default_filler,
    inject,
    timetravel_web_format,
)
from lm_eval_contam.errors import ContamError
from lm_eval_contam.partitions import dataset_spec


def test_timetravel_web_formats_match_table_10() -> None:
    assert timetravel_web_format(dataset_spec("ag_news"), "train", {"text": "Stocks rose.", "label": 2}) == (
        "This is an instance from the train split of the AG News dataset.\nInstance: Stocks rose.\nLabel: 2 (Business)"
    )
    assert timetravel_web_format(
        dataset_spec("rte"), "train", {"sentence1": "A man sleeps.", "sentence2": "A man rests.", "label": 0}
    ) == (
        "This is an instance from the train split of the RTE dataset.\n"
        "Sentence 1: A man sleeps.\nSentence 2: A man rests.\nLabel: 0 (entailment)"
    )
    assert timetravel_web_format(dataset_spec("xsum"), "test", {"document": "Long text.", "summary": "Short."}) == (
        "This is an instance from the test split of the XSum dataset.\nDocument: Long text.\nSummary: Short."
    )


def test_timetravel_web_format_names_missing_column() -> None:
    with pytest.raises(ContamError, match="'document'"):
        timetravel_web_format(dataset_spec("xsum"), "test", {"summary": "Short."})


def test_dcr_formats_match_appendix_b() -> None:
    assert dcr_data_format("SST-2", "sentiment analysis", ["great film", "dull plot"], ["positive", "negative"]) == (
        "This is the data from SST-2, which is a benchmark for sentiment analysis task.\n"
        "great film is positive\ndull plot is negative"
    )
    assert dcr_data_format("SST-2", "sentiment analysis", ["great film"]) == (
        "This is the data from SST-2, which is a benchmark for sentiment analysis task.\ngreat film"
    )
    assert dcr_data_format("GSM8K", "math word problem", ["1+1?"], ["2"], qa=True) == (
        "This is the data from GSM8K, which is a benchmark for math word problem task.\n\nQuestion: 1+1?\nAnswer: 2"
    )
    with pytest.raises(ContamError, match="2 items but 1 labels"):
        dcr_data_format("B", "t", ["a", "b"], ["x"])


def _words(text: str) -> int:
    return len(text.split())


def test_corpus_share_is_capped_and_seeded() -> None:
    contaminant = ["alpha beta gamma delta"] * 3  # 12 tokens
    filler = [f"filler document number {i} with seven words" for i in range(100)]  # 7 tokens each
    corpus = build_corpus(contaminant, filler, share=0.15, count_tokens=_words, seed=3, validation_docs=4)
    assert corpus.contaminant_tokens == 12
    # 12 * 0.85 / 0.15 = 68 filler tokens needed -> 10 documents of 7 tokens.
    assert corpus.filler_tokens == 70
    assert corpus.contaminant_share <= 0.15
    assert len(corpus.train) == 13 and len(corpus.validation) == 4
    assert not set(corpus.validation) & set(corpus.train)
    again = build_corpus(contaminant, filler, share=0.15, count_tokens=_words, seed=3, validation_docs=4)
    assert again == corpus
    other = build_corpus(contaminant, filler, share=0.15, count_tokens=_words, seed=4, validation_docs=4)
    assert other.train != corpus.train


def test_corpus_rejects_too_little_filler_and_bad_share() -> None:
    with pytest.raises(ContamError, match="needs 68"):
        build_corpus(["alpha beta gamma delta"] * 3, ["a b c"] * 10, share=0.15, count_tokens=_words, validation_docs=2)
    with pytest.raises(ContamError, match="share"):
        build_corpus(["x"], ["y"], share=0.0, count_tokens=_words)


def test_default_filler_is_substantial_prose() -> None:
    filler = default_filler()
    assert len(filler) > 500
    assert all(len(paragraph) >= 200 for paragraph in filler)


def test_inject_trains_and_writes_manifest(tiny_model_dir, tmp_path) -> None:
    spec = dataset_spec("ag_news")
    texts = [timetravel_web_format(spec, "train", {"text": f"Markets moved on day {i}.", "label": 2}) for i in range(4)]
    out = tmp_path / "contaminated"
    manifest = inject(
        str(tiny_model_dir), texts, str(out),
        settings=InjectionSettings(epochs=2, learning_rate=1e-3, share=0.5),
        description={"partition": "ag_news/train"}, progress=False,
    )
    assert (out / "model.safetensors").is_file()
    written = json.loads((out / "contamination_manifest.json").read_text())
    assert written == json.loads(json.dumps(manifest))
    assert written["injected"]["num_texts"] == 4 and written["injected"]["partition"] == "ag_news/train"
    assert written["corpus"]["contaminant_share"] <= 0.5
    assert len(written["loss"]["train_loss"]) == 2
    assert len(written["loss"]["eval_loss"]) == 3  # before training and after each epoch
    assert written["settings"]["learning_rate"] == 1e-3
