"""Option generation: prompt, parsing, validation, retries, cache, and the offline perturber."""

from __future__ import annotations

import json

import pytest

from lm_eval_contam import task_dir
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.core.wordnet import WORDNET_INSTALL_COMMAND, WordNet, load_wordnet
from lm_eval_contam.kit.instances import QuizInstance, quiz_instance, sample_indices, sample_instances
from lm_eval_contam.kit.perturb import perturb
from lm_eval_contam.kit.quiz_options import (
    collect_options,
    generation_prompt,
    model_proposer,
    options_for,
    parse_options,
    read_options,
    validate_options,
)

ORIGINAL = QuizInstance("text: The team won the final match on Sunday.\nlabel: 1 (Sports)", "label")
GOOD = (
    "text: The squad won the final match on Sunday.\nlabel: 1 (Sports)",
    "text: The team won the last match on Sunday.\nlabel: 1 (Sports)",
    "text: The team won the final game on Sunday.\nlabel: 1 (Sports)",
    "text: The team took the final match on Sunday.\nlabel: 1 (Sports)",
)

EXPECTED_GENERATION_PROMPT = (
    "Your task is to create a four-choice quiz by replacing the words in the provided INPUT TEXT with their "
    "contextually relevant synonyms.\n"
    "The meaning and sentence structure of the four options MUST EXACTLY match every detail in the INPUT TEXT.\n"
    "You MUST NOT include the provided INPUT TEXT as an option.\n"
    "\n"
    "You MUST make sure that:\n"
    "(1) You generate DISTINCT options based on the provided INPUT TEXT;\n"
    "(2) The ONLY difference between options is WORD-LEVEL PERTURBATIONS.\n"
    "(3) Options are ORDERED;\n"
    "(4) There is NOT any extra explanation;\n"
    "(5) You follow the following FORMAT to generate options;\n"
    "(6) You comply with every specific symbol and letter detail in the given INPUT TEXT; and\n"
    "(7) All options retain the EXACT LABEL from the INPUT TEXT, if there is one.\n"
    "---\n"
    "INPUT TEXT:\n"
    "summary: a {b} c\n"
    "---\n"
    "FORMAT:\n"
    "\n"
    "A)\nFirst word-level perturbation goes here\n"
    "\n"
    "B)\nSecond word-level perturbation goes here\n"
    "\n"
    "C)\nThird word-level perturbation goes here\n"
    "\n"
    "D)\nFourth word-level perturbation goes here\n"
    "---\n"  # the official prompt ends with a newline (shahriargolchin/DCQ, option_generation.py)
)


def completion(options) -> str:
    return "".join(f"{letter})\n{option}\n\n" for letter, option in zip("ABCD", options)) + "---"


def test_generation_prompt_renders_byte_for_byte() -> None:
    assert generation_prompt("summary: a {b} c") == EXPECTED_GENERATION_PROMPT


def test_parse_options() -> None:
    assert parse_options(completion(GOOD)) == GOOD
    assert parse_options("Here you go:\n" + completion(GOOD)) == GOOD
    assert parse_options("A) one\nB) two\nC) three\nD) four") == ("one", "two", "three", "four")
    assert parse_options("A)\none\n\nB)\ntwo\n\nC)\nthree") is None
    assert parse_options("B)\none\nA)\ntwo\nC)\nthree\nD)\nfour") is None
    assert parse_options("no options at all") is None


def test_valid_options_pass() -> None:
    assert validate_options(ORIGINAL, GOOD) == []


@pytest.mark.parametrize(
    ("replace", "problem"),
    [
        ({3: ORIGINAL.text}, "option D equals the original"),
        ({3: ORIGINAL.text.replace("team", "team ")}, "option D equals the original"),  # whitespace only
        ({2: GOOD[0]}, "options A and C are identical"),
        ({1: "  "}, "option B is empty"),
        ({0: GOOD[0].replace("1 (Sports)", "2 (Business)")}, "option A changes the label line"),
        ({0: GOOD[0].replace("\n", " ")}, "option A changes the line structure"),
        ({0: GOOD[0].replace("text:", "body:")}, "option A changes the line structure"),
        ({0: GOOD[0] + " And then the whole town celebrated for a week in the streets."}, "option A changes the length"),
    ],
)
def test_validation_rejects(replace, problem) -> None:
    options = [replace.get(i, option) for i, option in enumerate(GOOD)]
    problems = validate_options(ORIGINAL, options)
    assert any(p.startswith(problem) for p in problems), problems


def test_validation_rejects_missing_options() -> None:
    assert validate_options(ORIGINAL, GOOD[:3]) == ["expected 4 options, got 3"]
    assert validate_options(ORIGINAL, None)[0].startswith("no options produced")


def test_retries_then_reports_failures() -> None:
    other = QuizInstance("summary: nothing to see", None)
    calls = []

    def complete(prompts):
        calls.append(len(prompts))
        attempt = len(calls)
        replies = []
        for prompt in prompts:
            if ORIGINAL.text in prompt:  # released-data bug first (D = original), fixed on the retry
                replies.append(completion((*GOOD[:3], ORIGINAL.text) if attempt == 1 else GOOD))
            else:
                replies.append("I cannot do that.")
        return replies

    run = collect_options([ORIGINAL, other], model_proposer(complete), generator="fake", attempts=3, progress=False)
    assert calls == [2, 2, 1]  # both, then both again, then only the one still failing
    assert [(e.key, e.options, e.attempts) for e in run.entries] == [(ORIGINAL.key, GOOD, 2)]
    assert [(f.instance, f.attempts) for f in run.failures] == [(other.text, 3)]
    assert run.failures[0].problems[0].startswith("no options produced")


def test_cache_roundtrip_and_missing_entry(tmp_path) -> None:
    from lm_eval_contam.kit.quiz_options import append_options

    run = collect_options([ORIGINAL], lambda insts, attempt: [GOOD], generator="fake", progress=False)
    path = tmp_path / "options.jsonl"
    append_options(path, run.entries)
    cache = read_options(path)
    assert options_for([ORIGINAL], cache, cache_path=path, command="CMD")[0].options == GOOD
    with pytest.raises(ContamError, match="generate them with `lm-eval-contam dcq-options --x`"):
        options_for([QuizInstance("text: other")], cache, cache_path=path, command="lm-eval-contam dcq-options --x")


def test_cache_rejects_invalid_entries(tmp_path) -> None:
    record = {"key": ORIGINAL.key, "instance": ORIGINAL.text, "label_field": "label",
              "options": [*GOOD[:3], ORIGINAL.text]}
    path = tmp_path / "options.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(ContamError, match=r"options.jsonl:1.*option D equals the original"):
        read_options(path)
    path.write_text(json.dumps({**record, "key": "0" * 64, "options": list(GOOD)}) + "\n")
    with pytest.raises(ContamError, match="not the hash"):
        read_options(path)
    path.write_text(json.dumps({**record, "options": [1, 2, 3, 4]}) + "\n")
    with pytest.raises(ContamError, match=r"options.jsonl:1.*options must be a list of texts, got \[1, 2, 3, 4\]"):
        read_options(path)
    path.write_text("[1, 2]\n")
    with pytest.raises(ContamError, match=r"options.jsonl:1.*expected a JSON object, got list"):
        read_options(path)
    path.write_bytes(b"\xff\xfe{}\n")
    with pytest.raises(ContamError, match="not UTF-8 text"):
        read_options(path)


def test_instance_string_and_sampling() -> None:
    partition = Partition.parse("ag_news:train")
    instance = quiz_instance(partition, {"text": "Goal!", "label": 1})
    assert instance.text == "text: Goal!\nlabel: 1 (Sports)"
    assert instance.label_line == "label: 1 (Sports)"
    assert quiz_instance(Partition.parse("gsm8k:test"), {"question": "2+2?", "answer": "4"}).text == \
        "question: 2+2?"
    rte = quiz_instance(Partition.parse("rte:validation"), {"sentence1": "s1", "sentence2": "s2", "label": 0})
    assert rte.text == "sentence1: s1\nsentence2: s2\nlabel: 0 (entailment)"
    rows = [{"text": f"Story number {i}.", "label": i % 4} for i in range(1000)]
    indices = sample_indices(partition, rows, 100, seed=0)
    assert len(set(indices)) == 100 and indices == sorted(indices)
    assert indices == sample_indices(partition, rows, 100, seed=0)
    assert indices != sample_indices(partition, rows, 100, seed=1)
    assert sample_indices(partition, rows[:7], 100, seed=0) == list(range(7))


def test_sampling_without_duplicates_is_the_seeded_shuffle_as_before() -> None:
    """A shipped sample partition has no identical rows: every sample is the first n of the seeded order, exactly the
    rows sampled before identical rows were merged, so the measured numbers stay as they were."""
    from lm_eval_contam.core.seeding import rng_for

    for name in ("toy_news:train", "toy_reviews:test", "toy_pairs:train", "toy_dialogues:test"):
        partition = Partition.parse(name)
        rows = partition.rows()
        assert len({quiz_instance(partition, row).text for row in rows}) == len(rows)  # no duplicates to merge
        for seed in (0, 1, 7):
            order = rng_for(seed, "dcq", partition.dataset.display_name, partition.split).permutation(len(rows))
            for num_instances in (1, 3, len(rows) - 1, len(rows), 100):
                assert sample_indices(partition, rows, num_instances, seed) == \
                    sorted(int(i) for i in order[:num_instances])


def test_identical_rows_are_one_instance_in_the_sample() -> None:
    partition = Partition.parse("ag_news:train")
    rows = [{"text": "The same story.", "label": 1}] * 10_000 + [{"text": f"Story {i}.", "label": 2} for i in range(3)]
    indices = sample_indices(partition, rows, 100, seed=0)
    texts = [quiz_instance(partition, rows[i]).text for i in indices]
    assert len(indices) == 4 and len(set(texts)) == 4  # one of the 10,000 copies and the three others
    assert indices[1:] == [10_000, 10_001, 10_002]
    two = [instance.text for instance in sample_instances(partition, rows, 2, seed=0)]
    assert len(set(two)) == 2  # asked for two, given two distinct texts, whatever the copies' share


def test_offline_perturber_yields_valid_deterministic_options() -> None:
    partition = Partition.parse("toy_news:train")
    rows = [json.loads(line) for line in (task_dir() / "samples/toy_news_train.jsonl").read_text().splitlines()]
    for instance in sample_instances(partition, rows, 100, seed=0):
        options = perturb(instance, seed=0)
        assert validate_options(instance, options) == [], instance.text
        assert options == perturb(instance, seed=0)
        assert all(option.endswith(instance.label_line) for option in options)
    assert perturb(QuizInstance("text: the of and"), seed=0) is None  # nothing replaceable


def test_wordnet_synonyms_are_most_frequent_sense() -> None:
    wordnet = load_wordnet()
    assert wordnet.synonyms("team") == ("squad",)
    assert wordnet.synonyms("Team") == ("squad",)
    assert wordnet.synonyms("teams") == ("squads",)  # regular plural of a noun lemma
    assert wordnet.synonyms("zzzz") == ()


def test_missing_wordnet_names_the_install_command(tmp_path) -> None:
    with pytest.raises(ContamError, match=WORDNET_INSTALL_COMMAND):
        WordNet(tmp_path)


def test_shipped_toy_news_options_cover_its_partitions() -> None:
    cache = read_options(task_dir() / "samples/toy_news_options.jsonl")
    partition_rows = {
        split: [json.loads(line) for line in (task_dir() / f"samples/toy_news_{split}.jsonl").read_text().splitlines()]
        for split in ("train", "test")
    }
    for split, rows in partition_rows.items():
        instances = sample_instances(Partition.parse(f"toy_news:{split}"), rows, 100, seed=0)
        assert len(options_for(instances, cache, cache_path="shipped", command="-")) == 12


def test_instances_with_recorded_failures_are_left_out_not_fatal(tmp_path) -> None:
    from lm_eval_contam.kit.quiz_options import make_options, read_failures

    other = QuizInstance("text: v1.2 fix")
    path = tmp_path / "options.jsonl"
    propose = lambda insts, attempt: [GOOD if inst == ORIGINAL else None for inst in insts]  # noqa: E731
    report = make_options([ORIGINAL, other], path, propose, generator="fake", attempts=2, progress=False)
    assert (report.instances, report.cached, report.written) == (2, 0, 1)
    assert [(f.instance, f.attempts) for f in report.failures] == [(other.text, 2)]
    left_out = read_failures(path)
    assert list(left_out) == [other.key] and (tmp_path / "options.jsonl.failures.jsonl").is_file()
    # A second pass finds the cached instance and records the failure once, not twice.
    again = make_options([ORIGINAL, other], path, propose, generator="fake", attempts=1, progress=False)
    assert (again.cached, again.written, len(read_failures(path))) == (1, 0, 1)
    entries = options_for([ORIGINAL, other], read_options(path), cache_path=path, command="CMD", left_out=left_out)
    assert [entry.key for entry in entries] == [ORIGINAL.key]
    with pytest.raises(ContamError, match="none of the 1 instances has valid quiz options"):
        options_for([other], read_options(path), cache_path=path, command="CMD", left_out=left_out)


def test_an_options_cache_with_one_key_twice_and_other_options_is_refused(tmp_path) -> None:
    """Issue 30, item 8: the later record silently won. The same record twice (an append repeated) is harmless."""
    record = {"key": ORIGINAL.key, "instance": ORIGINAL.text, "label_field": "label", "options": list(GOOD)}
    path = tmp_path / "options.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n")
    assert read_options(path)[ORIGINAL.key].options == GOOD
    other = [GOOD[1], GOOD[0], *GOOD[2:]]
    path.write_text(json.dumps(record) + "\n" + json.dumps({**record, "options": other}) + "\n")
    with pytest.raises(ContamError) as error:
        read_options(path)
    assert str(error.value) == (f"{path}:2: field 'key': key {ORIGINAL.key!r} is on line 1 too, with other options; "
                                f"keep one set of options per instance")
