"""The pairing test's pieces: halves of an instance, groups, every pairing's text, and its docs on a partition."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_contam.pairing.halves import halves, paired_texts, pairing_groups
from lm_eval_contam.pairing.task import PairingSettings, pairing_docs, score_matrix
from lm_eval_contam.partitions import Partition


def test_an_instance_is_cut_at_the_sentence_boundary_nearest_its_middle() -> None:
    assert halves("The cat sat down. It was warm. The dog slept all day long.") == (
        "The cat sat down. It was warm.", "The dog slept all day long.")
    assert halves("one two three four five six seven") == ("one two three", "four five six seven")
    assert halves("too   short to cut") is None


def test_groups_are_seeded_and_leave_no_group_of_one() -> None:
    groups = pairing_groups(13, group_size=6, seed=0, identity="P")
    assert [len(group) for group in groups] == [6, 6]  # the 13th instance alone has no other pairing
    assert sorted(i for group in groups for i in group) != list(range(13))
    assert groups == pairing_groups(13, group_size=6, seed=0, identity="P")
    assert groups != pairing_groups(13, group_size=6, seed=1, identity="P")
    assert [len(g) for g in pairing_groups(14, group_size=6, seed=0, identity="P")] == [6, 6, 2]


def test_every_first_half_is_paired_with_every_second_half_row_by_row() -> None:
    texts = paired_texts(["a1", "b1"], ["a2", "b2"])
    assert texts == ["a1 a2", "a1 b2", "b1 a2", "b1 b2"]
    assert score_matrix([1.0, 2.0, 3.0, 4.0], 2) == [[1.0, 2.0], [3.0, 4.0]]


def test_docs_of_a_partition(tmp_path: Path) -> None:
    rows = [{"text": f"Item {i} begins with a plain sentence. Then item {i} ends in another one."} for i in range(14)]
    data = tmp_path / "free_test.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    partition = Partition.from_task_metadata({"dataset_name": "Free", "data_files": {"test": str(data)},
                                              "text_field": "text", "task_type": "question", "columns": ["text"]},
                                             "test")
    settings = PairingSettings(partition, num_instances=100, group_size=6, seed=0)
    docs = pairing_docs(settings, rows)
    assert [doc["size"] for doc in docs] == [6, 6, 2] and all(len(doc["texts"]) == doc["size"] ** 2 for doc in docs)
    first = docs[0]
    own = first["row_indices"][0]
    assert first["texts"][0] == f"Item {own} begins with a plain sentence. Then item {own} ends in another one."
    assert docs == pairing_docs(settings, rows)
    with pytest.raises(Exception, match="two halves"):
        pairing_docs(settings, [{"text": "too short"}] * 5)
