"""The likelihood modes' pure parts: scores, texts, controls, docs and task configs."""

from __future__ import annotations

import zlib

import pytest

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Control, Partition, sample_data_dir
from lm_eval_contam.kit.instances import instance_text
from lm_eval_contam.kit.quiz_options import read_options
from lm_eval_contam.kit.scoring import option_gap, per_byte, zlib_bytes, zlib_ratio
from lm_eval_contam.methods.likelihood.configs import render_task_config, task_names
from lm_eval_contam.methods.likelihood.docs import control_partition, lift_docs, option_docs, option_text


def test_scores_normalise_by_bytes_and_by_zlib_bytes() -> None:
    text = "héllo héllo héllo"  # 20 UTF-8 bytes (é is two)
    assert per_byte(-10.0, text) == -0.5
    assert zlib_bytes(text) == len(zlib.compress(text.encode("utf-8"), 9))
    assert zlib_ratio(-10.0, text) == -10.0 / zlib_bytes(text)
    assert option_gap(-1.0, [-1.5, -2.0, -1.0, -1.5]) == 0.5
    with pytest.raises(ContamError, match="empty"):
        per_byte(-1.0, "")


def test_texts_leave_out_labels_and_options_read_back_the_same() -> None:
    pairs = Partition.parse("toy_pairs:train")
    row = pairs.rows()[0]
    assert instance_text(pairs, row) == f"{row['sentence1']}\n{row['sentence2']}"
    option = f"sentence1: {row['sentence1']}\nsentence2: {row['sentence2']}\nlabel: 0 (entailment)"
    assert option_text(option, pairs) == instance_text(pairs, row)
    news = Partition.parse("toy_news:train")
    assert option_text("text: line one\nline two\nlabel: 1 (Sports)", news) == "line one\nline two"
    with pytest.raises(ContamError, match="no 'text' line"):
        option_text("label: 1 (Sports)", news)


def test_a_control_is_a_split_of_the_partitions_dataset() -> None:
    news = Partition.parse("toy_news:train")
    assert control_partition(news) == Partition.parse("toy_news:test")
    with pytest.raises(ContamError, match="name Toy News train's control"):
        control_partition(news.with_control(Control()))
    for bad in ({"kind": "split", "source": "train"}, {"kind": "split", "source": "nope"}, "test"):
        with pytest.raises(ContamError, match="unclear control"):
            Partition.from_task_metadata({"dataset": "toy_news", "control": bad}, "train")


def test_lift_docs_pair_each_instance_with_another_instances_second_piece() -> None:
    news = Partition.parse("toy_news:train")
    docs = lift_docs(news, news.rows(), num_instances=100, seed=0)
    assert len(docs) == 12
    references = [doc["reference"] for doc in docs]
    others = [doc["other_reference"] for doc in docs]
    assert sorted(others) == sorted(references)  # a cyclic shift: every second piece serves once as a control
    assert all(doc["reference"] != doc["other_reference"] for doc in docs)
    assert docs[0]["guided_prompt"].startswith("This is an instance from the train split of the Toy News dataset.")
    assert docs == lift_docs(news, news.rows(), num_instances=100, seed=0)


def test_option_docs_use_the_shipped_options() -> None:
    news = Partition.parse("toy_news:test")
    options = read_options(sample_data_dir() / "toy_news_options.jsonl")
    docs = option_docs(news, news.rows(), "control", options, num_instances=100, seed=0)
    assert len(docs) == 12 and all(len(doc["perturbed"]) == 4 for doc in docs)
    assert docs[0]["original"] == instance_text(news, news.rows()[docs[0]["row_index"]])


def test_task_configs_name_the_sibling_split_as_control() -> None:
    news = Partition.parse("toy_news:train")
    assert task_names(news) == ["likelihood_toy_news_train", "likelihood_toy_news_train_lift",
                                "likelihood_toy_news_train_options"]
    text = render_task_config(Partition.parse("rte:validation"), "control")
    assert '  control: {"kind": "split", "source": "train"}' in text and "dataset_path: nyu-mll/glue" in text
    assert "output_type: loglikelihood\n" in render_task_config(news, "lift")
    with pytest.raises(ContamError, match="mode"):
        render_task_config(news, "vibes")
