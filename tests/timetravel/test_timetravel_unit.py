"""Time Travel's pure pieces: verbatim prompts, seeded cuts, the bootstrap test and Judge A/B parsing."""

from __future__ import annotations

import json
from math import factorial
from pathlib import Path

import numpy as np
import pytest
from rouge_score import rouge_scorer

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition, dataset_from_task_metadata
from lm_eval_contam.core.text import rouge_l_f
from lm_eval_contam.kit.guided_prompts import render_prompt
from lm_eval_contam.kit.pieces import split_text
from lm_eval_contam.lmeval.request_parts import swap_prompt
from lm_eval_contam.methods.timetravel import (
    algorithm2_verdict,
    bootstrap_test,
    classify_match,
    parse_judge_b_match,
    render_judge_prompt,
)
from lm_eval_contam.methods.timetravel.instances import sample_docs

FIELDS = {"split_name": "train", "dataset_name": "AG News", "first_piece": "FP text", "label": "2 (Business)"}

EXPECTED = {
    ("guided", "cls"): "INSTRUCTION:\nYou are provided with the FIRST PIECE of an instance from the train split of the AG News dataset.\nFinish the SECOND PIECE of the instance as EXACTLY appeared in the dataset.\nONLY rely on the original form of the instance in the dataset to finish the SECOND PIECE.\n\nLABEL: 2 (Business)\n\nFIRST PIECE:\nFP text\n\nSECOND PIECE:\n",
    ("guided", "nli"): "INSTRUCTION:\nYou are provided with SENTENCE 1 from the train split of the AG News dataset.\nFinish SENTENCE 2 as appeared in the dataset.\nSENTENCE 2 MUST EXACTLY match the instance in the dataset.\n\nSENTENCE 1:\nFP text\n\nLABEL: 2 (Business)\n\nSENTENCE 2:\n",
    ("guided", "sum"): "INSTRUCTION:\nYou are provided with the FIRST PIECE of a summary from the train split of the AG News dataset.\nFinish the SECOND PIECE of the summary as EXACTLY appeared in the dataset.\nONLY rely on the original form of the summary in the dataset to finish the SECOND PIECE.\n\nFIRST PIECE:\nFP text\n\nSECOND PIECE:\n",
    ("guided", "xsum"): "INSTRUCTION:\nYou are provided with the FIRST PIECE of a one-sentence summary from the train split of the AG News dataset.\nFinish the SECOND PIECE of the summary as EXACTLY appeared in the dataset.\nONLY rely on the original form of the summary in the dataset to finish the SECOND PIECE.\n\nFIRST PIECE:\nFP text\n\nSECOND PIECE:\n",
    ("guided", "question"): "INSTRUCTION:\nYou are provided with the FIRST PIECE of a question from the train split of the AG News dataset.\nFinish the SECOND PIECE of the question as EXACTLY appeared in the dataset.\nONLY rely on the original form of the question in the dataset to finish the SECOND PIECE.\n\nFIRST PIECE:\nFP text\n\nSECOND PIECE:\n",
    ("general", "cls"): "INSTRUCTION:\nFinish the SECOND PIECE based on the FIRST PIECE, such that these two pieces become a single instance with the following LABEL.\n\nLABEL: 2 (Business)\n\nFIRST PIECE:\nFP text\n\nSECOND PIECE:\n",
    ("general", "nli"): "INSTRUCTION:\nFinish SENTENCE 2 based on SENTENCE 1, such that the following LABEL shows the logical relationship between SENTENCE 1 and SENTENCE 2.\n\nSENTENCE 1:\nFP text\n\nLABEL: 2 (Business)\n\nSENTENCE 2:\n",
    ("general", "sum"): "INSTRUCTION:\nFinish the SECOND PIECE based on the FIRST PIECE, such that these two pieces become a single summary.\n\nFIRST PIECE:\nFP text\n\nSECOND PIECE:\n",
    ("general", "xsum"): "INSTRUCTION:\nFinish the SECOND PIECE based on the FIRST PIECE, such that these two pieces become a single one-sentence summary.\n\nFIRST PIECE:\nFP text\n\nSECOND PIECE:\n",
    ("general", "question"): "INSTRUCTION:\nFinish the SECOND PIECE based on the FIRST PIECE, such that these two pieces become a single question.\n\nFIRST PIECE:\nFP text\n\nSECOND PIECE:\n",
}


@pytest.mark.parametrize(("kind", "task_type"), sorted(EXPECTED))
def test_instruct_templates_are_verbatim(kind: str, task_type: str) -> None:
    assert render_prompt(kind, task_type, **FIELDS) == EXPECTED[(kind, task_type)]


def test_completion_style_prompts() -> None:
    header = "This is an instance from the train split of the AG News dataset.\n"
    assert render_prompt("guided", "cls", "completion", **FIELDS) == header + "Instance: FP text"
    assert render_prompt("general", "cls", "completion", **FIELDS) == "Instance: FP text"
    assert render_prompt("guided", "nli", "completion", **FIELDS) == header + "Sentence 1: FP text\nLabel: 2 (Business)\nSentence 2:"
    assert render_prompt("general", "xsum", "completion", **FIELDS) == "Summary: FP text"
    assert render_prompt("general", "question", "completion", **FIELDS) == "Question: FP text"


def test_judge_prompt_fills_example_5_only() -> None:
    prompt = render_judge_prompt("Mount Olympus is in the center of the earth.", "Mount Olympus is located at the center of the earth.")
    assert prompt.startswith("INSTRUCTION:\nYou are provided with a reference text and a candidate text.\n")
    assert prompt.endswith(
        "Example 5:\n\nREFERENCE TEXT:\nMount Olympus is in the center of the earth.\n\n"
        "CANDIDATE TEXT:\nMount Olympus is located at the center of the earth.\n\nANSWER:\n"
    )
    assert prompt.count("ANSWER: Yes (near-exact match)") == 3 and prompt.count("ANSWER: Yes (exact match)") == 1


def test_bad_prompt_arguments_raise() -> None:
    with pytest.raises(ContamError, match="kind"):
        render_prompt("guide", "cls", **FIELDS)
    with pytest.raises(ContamError, match="label"):
        render_prompt("guided", "cls", split_name="train", dataset_name="X", first_piece="a")


LONG_TEXT = " ".join(f"Sentence {i} tells part {i} of the story." for i in range(20))


def test_split_points_lie_in_range_differ_and_repeat() -> None:
    cuts = []
    for row in range(50):
        split = split_text(LONG_TEXT, seed=0, identity=("Demo", "train", row))
        assert split is not None and split.unit == "sentence" and split.n_units == 20
        assert 0.40 <= split.drawn_fraction <= 0.70
        assert abs(split.cut - split.drawn_fraction * split.n_units) <= 0.5
        assert f"{split.first_piece} {split.second_piece}" == LONG_TEXT
        assert split_text(LONG_TEXT, seed=0, identity=("Demo", "train", row)) == split
        cuts.append(split.cut)
    assert len(set(cuts)) >= 4  # not one fraction for every instance (the released code's bug)


def test_single_sentence_is_cut_on_words_and_one_word_is_not_cut() -> None:
    split = split_text("one two three four five six seven eight nine ten", seed=3, identity=("x", 1))
    assert split.unit == "word" and 4 <= split.cut <= 7
    assert split_text("word", seed=0, identity=("x", 1)) is None


def test_sampling_is_seeded_and_independent_of_shards() -> None:
    partition = Partition.from_task_metadata(
        {"dataset_name": "Demo", "data_files": {"train": "demo.jsonl"}, "task_type": "cls", "text_field": "text",
         "label_field": "label", "label_names": ["neg", "pos"]}, "train")
    rows = [{"text": f"Row {i} starts here. It continues. It ends {i}.", "label": i % 2} for i in range(40)]
    first = sample_docs(rows, partition, num_instances=10, seed=1)
    assert first == sample_docs(rows, partition, num_instances=10, seed=1)
    assert [d["row_index"] for d in first] != list(range(10))
    assert [d["row_index"] for d in first] != [d["row_index"] for d in sample_docs(rows, partition, num_instances=10, seed=2)]
    assert first[0]["label"] == f"{first[0]['row_index'] % 2} ({'neg' if first[0]['row_index'] % 2 == 0 else 'pos'})"


def test_label_text_and_missing_metadata() -> None:
    assert Partition.parse("ag_news:test").label_text(2) == "2 (Business)"
    assert Partition.parse("rte:train").label_text("entailment") == "0 (entailment)"
    with pytest.raises(ContamError, match="outside"):
        Partition.parse("imdb:test").label_text(5)
    with pytest.raises(ContamError, match="text_field"):
        dataset_from_task_metadata({"dataset_name": "X", "data_files": {"train": "x.jsonl"}, "task_type": "cls",
                                    "config_source": "t.yaml"})


def test_swap_prompt_replaces_inside_a_chat_template() -> None:
    context = "<|im_start|>user\nGUIDED\n<|im_end|>\n<|im_start|>assistant\n"
    assert swap_prompt(context, "GUIDED\n", "GENERAL\n") == "<|im_start|>user\nGENERAL\n<|im_end|>\n<|im_start|>assistant\n"
    assert swap_prompt("<s>GUIDED</s>", "GUIDED\n", "GENERAL\n") == "<s>GENERAL</s>"


def test_rouge_l_matches_rouge_score() -> None:
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    reference, candidate = "The cat waited at the top.", "The cat was at the top of the tree."
    assert rouge_l_f(reference, candidate) == scorer.score(reference, candidate)["rougeL"].fmeasure


# Per-instance ROUGE-L of the released results (two decimals) and the paper's Table 9 p-values.
PUBLISHED = {
    "gpt4 rte validation": ([0.57, 0.32, 0.47, 0.32, 0.39, 0.11, 0.1, 0.38, 0.47, 0.25],
                            [0.32, 0.45, 0.47, 0.29, 0.39, 0.11, 0.11, 0.31, 0.41, 0.25], 0.165),
    "gpt4 samsum test": ([0.28, 0.25, 0.1, 0.1, 0.18, 0.12, 0.16, 0.07, 0.09, 0.17],
                         [0.07, 0.15, 0.07, 0.09, 0.11, 0.27, 0.11, 0.08, 0.11, 0.11], 0.105),
    "gpt3.5 wnli validation": ([0.53, 0.42, 0.43, 0.55, 0.48, 0.27, 0.5, 0.26, 0.65, 0.13],
                               [0.18, 0.43, 0.35, 0.31, 0.63, 0.13, 0.24, 0.33, 0.27, 0.32], 0.044),
    "gpt4 wnli validation": ([0.73, 0.53, 0.35, 1, 1, 0.24, 0.77, 0.57, 0.29, 0.82],
                             [0.43, 0.33, 0.63, 0.2, 0.48, 0.22, 0.57, 0.42, 0.27, 0], 0.003),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_paired_bootstrap_reproduces_published_pvalues(name: str) -> None:
    guided, general, published = PUBLISHED[name]
    result = bootstrap_test(guided, general, seed=0)
    # Within Monte-Carlo error of 10,000 resamples plus the released scores' two-decimal
    # rounding, which turns near-ties into exact ties (rte: 0.1745 vs 0.165 published).
    assert abs(result.pvalue - published) <= 0.01
    assert result.significant() == (published <= 0.05)
    assert result.statistic == pytest.approx(np.mean(guided) - np.mean(general))


def test_unpaired_differs_as_the_released_code() -> None:
    guided, general, published = PUBLISHED["gpt4 rte validation"]
    unpaired = bootstrap_test(guided, general, paired=False, seed=0)
    assert not unpaired.paired and unpaired.pvalue > 0.3 > published  # ignores the pairing, so far weaker
    # WNLI validation on GPT-3.5 is significant in the paper (0.044); only the paired test agrees.
    guided, general, published = PUBLISHED["gpt3.5 wnli validation"]
    assert bootstrap_test(guided, general).significant()
    assert not bootstrap_test(guided, general, paired=False).significant()


def _exact_paired_pvalue(guided: list[float], general: list[float]) -> float:
    """Slow reference: the ideal bootstrap p, enumerating every multiset of indices with its probability."""
    differences = np.array(guided) - np.array(general)
    n = len(differences)

    def counts(total: int, slots: int):
        if slots == 1:
            yield (total,)
            return
        for first in range(total + 1):
            for rest in counts(total - first, slots - 1):
                yield (first, *rest)

    p = 0.0
    for draw in counts(n, n):
        if np.dot(draw, differences) / n <= 0:
            p += factorial(n) / np.prod([factorial(c) for c in draw]) / n**n
    return p


def test_bootstrap_matches_slow_reference_and_is_seeded() -> None:
    guided, general = [0.9, 0.4, 0.75, 0.2, 0.6, 0.55], [0.31, 0.52, 0.18, 0.27, 0.64, 0.33]
    reference = _exact_paired_pvalue(guided, general)
    result = bootstrap_test(guided, general, seed=7, n_resamples=200_000)
    assert abs(result.pvalue - reference) <= 4 * np.sqrt(reference * (1 - reference) / 200_000)
    assert bootstrap_test(guided, general, seed=7).pvalue == bootstrap_test(guided, general, seed=7).pvalue
    assert result.confidence_interval.low < result.statistic < result.confidence_interval.high


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ContamError, match="equal lengths"):
        bootstrap_test([0.1, 0.2], [0.1])
    with pytest.raises(ContamError, match="guided"):
        bootstrap_test([], [])


PAIRS = [json.loads(line) for line in (Path(__file__).parents[1] / "data" / "timetravel_labelled_pairs.jsonl").open()]


@pytest.mark.parametrize("pair", [p for p in PAIRS if p["source"].startswith("paper Figure 3")], ids=lambda p: p["source"])
def test_judge_a_labels_figure_3_as_the_paper(pair: dict) -> None:
    assert classify_match(pair["reference"], pair["candidate"]) == pair["label"]


def test_judge_a_agreement_on_every_labelled_pair() -> None:
    """All 75 labelled pairs; the four disagreements are listed so a change to the rules shows here."""
    disagreements = {(p["reference"], p["label"]) for p in PAIRS if classify_match(p["reference"], p["candidate"]) != p["label"]}
    assert disagreements == {
        ("George got back.", "inexact"),
        ("He will be moving out of The old house on Thursday.", "inexact"),
        ("Arnold lived two centuries later.", "inexact"),
        ("has died of her wounds, bringing the total killed in the assault by Islamists to 22.", "near_exact"),
    }
    assert len(PAIRS) == 75  # agreement 71/75; exact 7/7, near-exact 8/9, inexact 56/59


def test_judge_a_examples_of_the_paper_tables() -> None:
    assert classify_match("The cat waited at the top.", "the cat waited at the top") == "exact"
    assert classify_match("books that are 400 pages each?", "books of 400 pages each?") == "near_exact"
    assert classify_match("a new sofa, and he needs grey pillows.", "a new car without consulting her first.") == "inexact"
    assert classify_match("The mouse was too cautious.", "The mouse was not too cautious.") == "inexact"


def test_judge_b_reply_parsing_and_partition_rule() -> None:
    assert parse_judge_b_match(" Yes (exact match)") == "exact"
    assert parse_judge_b_match("Yes (near-exact match).") == "near_exact"
    assert parse_judge_b_match("No") == "inexact"
    assert parse_judge_b_match("Yes") == "inexact"
    assert algorithm2_verdict(["exact", "inexact"]).contaminated
    assert algorithm2_verdict(["near_exact", "near_exact"]).contaminated
    assert not algorithm2_verdict(["near_exact", "inexact", "inexact"]).contaminated


def test_shipped_configs_are_indexed(task_manager_for) -> None:
    names = set(task_manager_for().all_tasks)
    assert {"timetravel_ag_news_train", "timetravel_wnli_validation", "timetravel_gsm8k_test_completion"} <= names
    assert {"timetravel", "timetravel_completion"} <= names


def test_sentences_keep_common_english_abbreviations_whole() -> None:
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    from lm_eval_contam.core.partitions import sample_partitions
    from lm_eval_contam.kit.pieces import sentences

    text = "Mr. Smith went to the U.S. Senate on Jan. 5. He spoke for an hour. No. 10 Downing St. was quiet."
    assert sentences(text) == ["Mr. Smith went to the U.S. Senate on Jan. 5.", "He spoke for an hour.",
                               "No. 10 Downing St. was quiet."]
    # Untrained Punkt (the splitter before the list) cut that into 8 pieces; on the shipped samples the two agree.
    assert len(PunktSentenceTokenizer().tokenize(text)) == 8
    texts = [row[field] for partition in sample_partitions() for row in partition.rows()
             for field in (partition.dataset.text_field, partition.dataset.second_field) if field]
    assert all(sentences(text) == PunktSentenceTokenizer().tokenize(text.strip()) for text in texts)


def test_identical_rows_are_one_time_travel_instance() -> None:
    """Issue 30, item 8: 10,000 identical rows counted as 10 instances (the same text completed ten times); the
    sample now keeps each text once, as the quiz's does, and is unchanged where no row repeats."""
    partition = Partition.from_task_metadata(
        {"dataset_name": "Demo", "data_files": {"train": "demo.jsonl"}, "task_type": "cls", "text_field": "text",
         "label_field": "label", "label_names": ["neg", "pos"]}, "train")
    same = [{"text": "One row starts here. It continues. It ends.", "label": 0}] * 10_000
    assert len(sample_docs(same, partition, num_instances=10, seed=0)) == 1
    distinct = [{"text": f"Row {i} starts here. It continues. It ends {i}.", "label": i % 2} for i in range(40)]
    mixed = distinct + distinct[:5]  # five rows twice
    drawn = sample_docs(mixed, partition, num_instances=45, seed=1)
    assert len(drawn) == 40 and len({mixed[doc["row_index"]]["text"] for doc in drawn}) == 40
