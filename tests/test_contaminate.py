"""Injection formats (byte-exact, from the papers), row selection and corpus mixing."""

from __future__ import annotations

import json

import pytest

from lm_eval_contam.contaminate import (
    InjectionSettings,
    audited_rows,
    contaminant_texts,
    inject,
    partition_contaminant,
    trained_with,
)
from lm_eval_contam.contaminate.corpus import build_corpus, default_filler
from lm_eval_contam.contaminate.formats import dcr_data_format, timetravel_web_format
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.kit import instances as dcq_instances
from lm_eval_contam.methods.timetravel import instances as timetravel_instances


def test_timetravel_web_formats_match_table_10() -> None:
    assert timetravel_web_format(Partition.parse("ag_news:train"), {"text": "Stocks rose.", "label": 2}) == (
        "This is an instance from the train split of the AG News dataset.\nInstance: Stocks rose.\nLabel: 2 (Business)"
    )
    assert timetravel_web_format(
        Partition.parse("rte:train"), {"sentence1": "A man sleeps.", "sentence2": "A man rests.", "label": 0}
    ) == (
        "This is an instance from the train split of the RTE dataset.\n"
        "Sentence 1: A man sleeps.\nSentence 2: A man rests.\nLabel: 0 (entailment)"
    )
    assert timetravel_web_format(Partition.parse("xsum:test"), {"document": "Long text.", "summary": "Short."}) == (
        "This is an instance from the test split of the XSum dataset.\nDocument: Long text.\nSummary: Short."
    )
    assert timetravel_web_format(Partition.parse("gsm8k:test"), {"question": "1+1?", "answer": "2"}) == (
        "This is an instance from the test split of the GSM8k dataset.\nQuestion: 1+1?\nAnswer: 2"
    )


def test_timetravel_web_format_names_missing_column() -> None:
    with pytest.raises(ContamError, match="'document'"):
        timetravel_web_format(Partition.parse("xsum:test"), {"summary": "Short."})
    with pytest.raises(ContamError, match="'label'"):
        timetravel_web_format(Partition.parse("ag_news:train"), {"text": "Stocks rose."})


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


def test_contaminant_texts_write_dcr_blocks_of_eight() -> None:
    news = Partition.parse("ag_news:train")
    rows = [{"text": f"story {i}", "label": i % 4} for i in range(10)]
    l4 = contaminant_texts(news, rows, "dcr-l4")
    assert len(l4) == 2  # 8 + 2 items
    assert l4[0].split("\n")[:3] == [
        "This is the data from AG News, which is a benchmark for text classification task.",
        "story 0 is World", "story 1 is Sports",
    ]
    assert l4[1].endswith("\nstory 8 is World\nstory 9 is Sports")
    assert contaminant_texts(news, rows[:1], "dcr-l3") == [
        "This is the data from AG News, which is a benchmark for text classification task.\nstory 0"]
    assert contaminant_texts(Partition.parse("gsm8k:test"), [{"question": "1+1?", "answer": "2"}], "dcr-l4") == [
        "This is the data from GSM8k, which is a benchmark for math word problem task.\n\nQuestion: 1+1?\nAnswer: 2"]


def test_contaminant_texts_errors_name_the_value() -> None:
    news = Partition.parse("ag_news:train")
    with pytest.raises(ContamError, match="unknown format 'dcr-l5'"):
        contaminant_texts(news, [{"text": "x", "label": 0}], "dcr-l5")
    with pytest.raises(ContamError, match="XSum is 'xsum'"):
        contaminant_texts(Partition.parse("xsum:test"), [{"summary": "s", "document": "d"}], "dcr-l4")
    with pytest.raises(ContamError, match="outside 0..3"):
        contaminant_texts(news, [{"text": "x", "label": 9}], "dcr-l4")


def test_audited_rows_are_the_union_of_each_methods_sample() -> None:
    small = Partition.parse("toy_news:train")
    assert audited_rows(small, small.rows()) == list(range(12))  # sample partitions: every row
    big = Partition.parse("ag_news:train")
    rows = [{"text": f"Story number {i} moved markets. Then prices fell sharply again.", "label": i % 4}
            for i in range(500)]
    chosen = audited_rows(big, rows)
    timetravel, dcq = timetravel_instances.audited_rows(big, rows), dcq_instances.audited_rows(big, rows)
    assert chosen == sorted(set(timetravel) | set(dcq))
    assert len(timetravel) == 10 and len(dcq) == 100 and 100 <= len(chosen) <= 110


def test_partition_contaminant_records_its_sources() -> None:
    toy = Partition.parse("toy_news:train")
    texts, sources = partition_contaminant([toy], "timetravel")
    assert sources == [{"partition": "toy_news:train", "format": "timetravel", "rows": list(range(12))}]
    assert texts == contaminant_texts(toy, toy.rows(), "timetravel")
    assert texts[0].startswith("This is an instance from the train split of the Toy News dataset.\nInstance: ")
    _, all_sources = partition_contaminant([toy, Partition.parse("toy_news:test")], "dcr-l3", all_rows=True)
    assert [(s["partition"], s["format"], len(s["rows"])) for s in all_sources] == [
        ("toy_news:train", "dcr-l3", 12), ("toy_news:test", "dcr-l3", 12)]


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
    with pytest.raises(ContamError, match="nothing to inject"):
        build_corpus([], ["y"], share=0.5, count_tokens=_words)


def test_default_filler_is_substantial_prose() -> None:
    filler = default_filler()
    assert len(filler) > 500
    assert all(len(paragraph) >= 200 for paragraph in filler)


def test_inject_trains_and_writes_manifest(tiny_model_dir, tmp_path) -> None:
    news = Partition.parse("ag_news:train")
    texts = [timetravel_web_format(news, {"text": f"Markets moved on day {i}.", "label": 2}) for i in range(4)]
    out = tmp_path / "contaminated"
    settings = InjectionSettings(epochs=2, learning_rate=1e-3, share=0.5)
    sources = [{"partition": "ag_news:train", "format": "timetravel", "rows": [0, 1, 2, 3]}]
    assert not trained_with(out, settings, sources)
    manifest = inject(str(tiny_model_dir), texts, str(out), settings=settings, description={"sources": sources},
                      progress=False)
    assert (out / "model.safetensors").is_file()
    written = json.loads((out / "contamination_manifest.json").read_text())
    assert written == json.loads(json.dumps(manifest))
    assert list(written) == ["base_model", "injected", "settings", "corpus", "loss", "train_seconds",
                             "lm_eval_contam_version", "git_revision"]
    assert written["injected"]["num_texts"] == 4 and written["injected"]["sources"] == sources
    assert written["corpus"]["contaminant_share"] <= 0.5
    assert written["corpus"]["filler_source"] == "pydoc_data.topics (Python reference docs)"
    assert len(written["loss"]["train_loss"]) == 2
    assert len(written["loss"]["eval_loss"]) == 3  # before training and after each epoch
    assert written["settings"]["learning_rate"] == 1e-3
    assert trained_with(out, settings, sources)  # a rerun reuses the model ...
    assert written["settings"]["mixed_precision"] == "no"  # ... trained in fp32, where bf16 is native too
    assert trained_with(out, InjectionSettings(epochs=2, learning_rate=1e-3, share=0.5, mixed_precision="bf16"), sources)
    assert not trained_with(out, InjectionSettings(epochs=3, learning_rate=1e-3, share=0.5), sources)
    assert not trained_with(out, settings, [{**sources[0], "rows": [0]}])  # ... only for the same injection
