"""The pairing test's pieces: halves of an instance, groups, every pairing's text, and its docs on a partition."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.methods.pairing.halves import halves, paired_texts, pairing_groups
from lm_eval_contam.methods.pairing.task import PairingSettings, pairing_docs, score_matrix


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


def test_the_tests_on_u_read_both_models_samples_of_a_task_paired_by_the_groups_identity(tmp_path: Path) -> None:
    """What ``run --reference-model`` adds to the task's row (``MethodSpec.reference_tests``): a model that raised
    the true pairings over its reference is far out, a model equal to its reference is not."""
    import numpy as np

    from lm_eval_contam.core.errors import ContamError
    from lm_eval_contam.methods.pairing.method import SPEC as spec
    data = tmp_path / "free_test.jsonl"
    data.write_text(json.dumps({"text": "One plain sentence here. And another one after it."}) + "\n")
    config = {"test_split": "test", "metadata": {"method": "pairing", "dataset_name": "Free", "seed": 0,
                                                 "data_files": {"test": str(data)}, "text_field": "text",
                                                 "task_type": "question", "columns": ["text"]}}
    rng = np.random.default_rng(0)
    reference = [{"pairing_pvalue": {"identity": f"Free test:group{g}", "size": 6,
                                     "scores": [float(s) for s in rng.normal(-40, 5, 36)]}} for g in range(5)]
    memorised = [{"pairing_pvalue": {**sample["pairing_pvalue"],
                                     "scores": [s + (3.0 if n % 7 == 0 else 0.0)  # the diagonal of the 6 x 6 group
                                                for n, s in enumerate(sample["pairing_pvalue"]["scores"])]}}
                 for sample in reference]
    found = spec.reference_tests(list(reversed(memorised)), reference, config, "the reference's run")
    assert set(found) == {"pairing_reference"}
    assert found["pairing_reference"].pvalue < 0.001 and found["pairing_reference"].standardised > 3
    itself = spec.reference_tests(reference, reference, config, "the reference's run")["pairing_reference"]
    assert itself.pvalue == 1.0 and itself.standardised == 0.0
    with pytest.raises(ContamError, match="no record of 'Free test:group4'"):
        spec.reference_tests(memorised, reference[:4], config, "the reference's run")
