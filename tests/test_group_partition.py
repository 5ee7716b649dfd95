"""``audit --tasks <group>``: one partition drawn across the group's subtasks, not one per subtask (issue 42).

Two multiple-choice subtasks of different sizes (30 and 10 items, each with a validation split) make a group. Its
partition must hold ``--sample`` rows shared out in proportion to the subtasks' sizes, each a subtask's rendered row,
with a control of as many rows per subtask from their validation splits; ``--per-subtask`` keeps one partition per
subtask; the reordered score's K follows the size of the benchmark named (the group's), not each subtask's.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from lm_eval_contam import harness
from lm_eval_contam.audit.benchmark_partitions import (
    NO_CONTROL,
    derive_partitions,
    doc_row,
    group_partition,
    requested_control,
    split_lengths_test,
    write_partition,
)
from lm_eval_contam.audit.own_data import check_partition_rows
from lm_eval_contam.cli import main as cli_main
from lm_eval_contam.core.overlap import control_overlap
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import Control, Partition
from lm_eval_contam.core.rundir import load_run
from lm_eval_contam.core.seeding import proportional_shares
from lm_eval_contam.kit.instances import sample_indices
from lm_eval_contam.lmeval.benchmark_docs import load_tasks
from lm_eval_contam.methods.reordered.benchmark_tasks import adjustment_tasks
from lm_eval_contam.verdicts.verdict import collect, partition_verdicts

SIZES = {"bench_a": 30, "bench_b": 10}
TASK_YAML = """task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
{files}
test_split: test
{validation}output_type: multiple_choice
doc_to_text: "Question: {{{{question}}}}\\nA. {{{{choices[0]}}}}\\nB. {{{{choices[1]}}}}\\nC. {{{{choices[2]}}}}\\nD. {{{{choices[3]}}}}\\nAnswer:"
doc_to_target: answer
doc_to_choice: ["A", "B", "C", "D"]
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""


def _question(subtask: str, split: str, i: int) -> dict:
    tools = ["hammer", "needle", "ladder", "kettle", "lantern", "compass", "anchor", "bucket", "saddle", "chisel"]
    # Both splits draw their entries from one pool (other entries, the same words and lengths): exchangeable.
    entry = 2 * i + (split == "validation")  # even entries in test, odd ones in validation
    side = ("north", "south")[i % 2]
    return {"question": f"In the {subtask} {side} ledger entry {entry}, the clerk listed a {tools[i % 10]} bought in "
                        f"year {1700 + 7 * entry}. Which colour was the {tools[(i + 3) % 10]} painted?",
            "choices": ["red", "green", "blue", "grey"], "answer": (i * 7) % 4}


def write_group(root: Path, sizes: dict[str, int], *, validation: bool = True, group: str = "bench_group") -> Path:
    """The subtasks' JSONL and YAMLs and the group's YAML under ``root/tasks``; the folder."""
    data, tasks = root / "data", root / "tasks"
    data.mkdir(parents=True)
    tasks.mkdir()
    for name, size in sizes.items():
        files = {"test": size, **({"validation": size} if validation else {})}
        for split, count in files.items():
            (data / f"{name}_{split}.jsonl").write_text(
                "".join(json.dumps(_question(name, split, i)) + "\n" for i in range(count)))
        (tasks / f"{name}.yaml").write_text(TASK_YAML.format(
            name=name, files="".join(f"    {split}: {data / f'{name}_{split}.jsonl'}\n" for split in files),
            validation="validation_split: validation\n" if validation else ""))
    (tasks / f"{group}.yaml").write_text(f"group: {group}\ntask:\n" + "".join(f"  - {name}\n" for name in sizes))
    return tasks


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_group(tmp_path_factory.mktemp("group_tasks"), SIZES)


@pytest.fixture(scope="module")
def manager(task_dir: Path):
    return harness.task_manager((str(task_dir),), include_defaults=False)


@pytest.fixture(scope="module")
def loaded(manager) -> dict:
    return load_tasks(["bench_group"], manager)


def test_shares_follow_the_sizes_and_equal_remainders_go_in_the_given_order() -> None:
    assert proportional_shares({"a": 30, "b": 10}, 24, ["a", "b"]) == {"a": 18, "b": 6}
    assert proportional_shares({"a": 10, "b": 10, "c": 10}, 4, ["c", "a", "b"]) == {"a": 1, "b": 1, "c": 2}
    assert proportional_shares({"a": 10, "b": 10, "c": 10}, 4, ["b", "c", "a"]) == {"a": 1, "b": 2, "c": 1}
    assert proportional_shares({"a": 5, "b": 0}, 5, ["b", "a"]) == {"a": 5, "b": 0}
    # remainders equal as fractions (1/3 each) are ties, whatever floats make of them: the order of ``ties`` decides
    assert proportional_shares({"a": 1, "b": 7, "c": 1}, 3, ["a", "c", "b"]) == {"a": 1, "b": 2, "c": 0}
    assert proportional_shares({"a": 1, "b": 7, "c": 1}, 3, ["c", "a", "b"]) == {"a": 0, "b": 2, "c": 1}


def test_a_group_is_one_partition_drawn_across_its_subtasks_in_proportion(loaded: dict, tmp_path: Path) -> None:
    (partition,) = derive_partitions(loaded)
    assert (partition.group, partition.task, partition.split, partition.subtasks, partition.label) == (
        "bench_group", "bench_group", "test", ("bench_a", "bench_b"), "bench_group test")
    # Every row the split control can compare (both validation splits are as large as their test splits), the
    # methods' sample of 24 drawn from them in the subtasks' proportions.
    assert partition.key == "task_bench_group" and partition.sample == 24
    assert Counter(row["subtask"] for row in partition.rows) == SIZES
    rendered = {name: [doc_row(doc) for doc in loaded["bench_group"].docs[name]] for name in SIZES}
    for row in partition.rows:  # each drawn row is its subtask's rendered doc, as a task's own partition holds it
        assert {key: value for key, value in row.items() if key != "subtask"} in rendered[row["subtask"]]
    assert len({row["text"] for row in partition.rows}) == 40
    card = Partition.from_card(write_partition(partition, tmp_path))
    for seed in range(3):
        sample = sample_indices(card, partition.rows, 100, seed)
        assert Counter(partition.rows[index]["subtask"] for index in sample) == {"bench_a": 18, "bench_b": 6}
    # The control: the subtasks' own validation splits, as many rows of each as the audited side holds.
    assert (partition.control.kind, partition.control.split, partition.control.assumed) == ("split", "validation", True)
    assert Counter(row["subtask"] for row in partition.control_rows) == SIZES
    assert all(int(row["text"].split(" ledger entry ")[1].split(",")[0]) % 2 for row in partition.control_rows)
    # Its lengths' test reads the two drawn sides (what the control tests compare), not the whole splits.
    drawn_sides = split_lengths_test([row["text"] for row in partition.rows],
                                     [row["text"] for row in partition.control_rows])
    assert partition.control.lengths_pvalue == drawn_sides.pvalue
    assert partition.statement().startswith("bench_group test: control: the subtasks' validation split")
    # Seeded: the same draw again (every row here: another seed draws them too; a capped draw differs by seed below).
    assert derive_partitions(loaded) == [partition] == derive_partitions(loaded, seed=1)


def test_a_group_draws_as_many_rows_as_its_controls_and_the_cap_allow(loaded: dict) -> None:
    parts = derive_partitions(loaded, per_subtask=True)
    short = [replace(part, control_rows=part.control_rows[:4]) if part.task == "bench_b" else part for part in parts]
    # bench_b's 4 control rows hold its share of 16 rows (12 + 4), not of the 24 of the sample: no control at 24 ...
    assert group_partition("bench_group", short, 24).no_control.startswith(
        "subtask bench_b's validation split has 4 row(s), fewer than its share of the group's sample (6)")
    # ... and above a sample of 8 the group draws the 16 its controls allow, both sides in the same proportions.
    sixteen = group_partition("bench_group", short, 8)
    assert Counter(row["subtask"] for row in sixteen.rows) == {"bench_a": 12, "bench_b": 4} == Counter(
        row["subtask"] for row in sixteen.control_rows)
    capped = group_partition("bench_group", [replace(part, control_items=20) for part in parts], 8)
    assert Counter(row["subtask"] for row in capped.rows) == {"bench_a": 15, "bench_b": 5}
    reseeded = group_partition("bench_group", [replace(part, control_items=20) for part in parts], 8, seed=1)
    assert reseeded.rows != capped.rows and group_partition(
        "bench_group", [replace(part, control_items=20) for part in parts], 8) == capped
    # Controls of two split names make no control for the group: it keeps its sample, no rows drawn for a test it
    # will not run.
    mixed = [replace(part, control=replace(part.control, split="dev")) if part.task == "bench_b" else part
             for part in parts]
    unpaired = group_partition("bench_group", mixed, 8)
    assert (Counter(row["subtask"] for row in unpaired.rows), unpaired.control_rows) == ({"bench_a": 6, "bench_b": 2}, ())
    assert unpaired.no_control.startswith("the subtasks' controls are different splits (dev, validation)")


def test_only_a_card_naming_the_subtask_column_samples_in_its_proportions(loaded: dict, tmp_path: Path) -> None:
    """One's own data may have a column called ``subtask``: without the card's ``subtask_field`` (which only
    ``audit --tasks`` on a group writes) it is one pool, sampled as if the column were not there."""
    (partition,) = derive_partitions(loaded)
    path = write_partition(partition, tmp_path)
    fields = yaml.safe_load(path.read_text())
    assert fields["subtask_field"] == "subtask"
    own = path.with_name("own_data_test.yaml")
    own.write_text(yaml.safe_dump({key: value for key, value in fields.items() if key != "subtask_field"}))
    group_card, own_card = Partition.from_card(path), Partition.from_card(own)
    unmarked = [{key: value for key, value in row.items() if key != "subtask"} for row in partition.rows]
    stratified = [sample_indices(group_card, partition.rows, 24, seed) for seed in range(6)]
    pooled = [sample_indices(own_card, partition.rows, 24, seed) for seed in range(6)]
    assert pooled == [sample_indices(own_card, unmarked, 24, seed) for seed in range(6)]
    assert pooled != stratified  # the pool's draws do not all hold the 18 + 6 the group's do
    assert {tuple(Counter(partition.rows[i]["subtask"] for i in draw).values()) for draw in stratified} == {(18, 6)}
    with pytest.raises(ContamError) as refused:
        sample_indices(group_card, unmarked, 24, 0)
    assert (refused.value.field, str(refused.value).split(": ")[-1]) == (
        "subtask_field", "row 0 has no 'subtask', the column the card names as its rows' subtask")
    # The audit checks the rows before it writes anything: a row without the column is refused by file and line.
    check_partition_rows(own_card, unmarked, "mine.jsonl")  # no subtask_field: no such column needed
    with pytest.raises(ContamError) as before_writing:
        check_partition_rows(group_card, [*partition.rows[:3], *unmarked[3:]], "mine.jsonl")
    assert (before_writing.value.source, before_writing.value.field) == ("mine.jsonl:4", "subtask_field")


def test_per_subtask_and_no_cap_keep_what_they_say(loaded: dict) -> None:
    per_subtask = derive_partitions(loaded, per_subtask=True)
    assert [(p.task, len(p.rows), p.subtasks) for p in per_subtask] == [("bench_a", 30, ()), ("bench_b", 10, ())]
    (whole,) = derive_partitions(loaded, sample=None)
    assert Counter(row["subtask"] for row in whole.rows) == SIZES and whole.sample is None
    assert Counter(row["subtask"] for row in whole.control_rows) == SIZES
    (flagged,) = derive_partitions(loaded, requested_control(split="validation"))
    # named by a flag: no lengths' test; the overlap of the two drawn sides
    assert flagged.control == replace(Control.of_split("validation"), overlap=control_overlap(
        [row["text"] for row in flagged.rows], [row["text"] for row in flagged.control_rows]))
    (none,) = derive_partitions(loaded, NO_CONTROL)
    assert (none.control, none.no_control, none.statement()) == (Control(), None, None)


def test_a_subtask_without_a_second_split_leaves_the_group_without_a_control(tmp_path: Path) -> None:
    tasks = write_group(tmp_path, {"bench_c": 6, "bench_d": 6}, validation=False, group="plain_group")
    benchmark = load_tasks(["plain_group"], harness.task_manager((str(tasks),), include_defaults=False))
    (partition,) = derive_partitions(benchmark)
    assert len(partition.rows) == 12 and partition.control == Control()
    assert partition.statement() == ("plain_group test: subtask bench_c: no second split: the with-control verdict "
                                     "is not computed")
    parts = derive_partitions(benchmark, per_subtask=True)
    assert group_partition("plain_group", parts, 4) == group_partition("plain_group", parts, 4)
    assert Counter(row["subtask"] for row in group_partition("plain_group", parts, 4).rows) == {
        "bench_c": 2, "bench_d": 2}


def test_the_reordered_score_takes_k_from_the_size_of_the_benchmark_named(tmp_path: Path) -> None:
    tasks = write_group(tmp_path, {"big_a": 150, "big_b": 150}, validation=False, group="big_group")
    manager = harness.task_manager((str(tasks),), include_defaults=False)

    def reorderings(named: str) -> dict[str, int]:
        found = {}
        for path in adjustment_tasks([named], manager, {"seed": 0}, home=tmp_path / "home" / named):
            metadata = yaml.safe_load(Path(path).read_text())["metadata"]
            found[metadata["reordered_benchmark"]] = metadata["reorderings"]
        return found

    # 300 items named as one group: K = 1000 // 300 = 3 for each subtask; one subtask of 150 named alone: K = 4.
    assert reorderings("big_group") == {"big_a": 3, "big_b": 3}
    assert reorderings("big_a") == {"big_a": 4}


def test_audit_of_a_group_runs_its_tests_once_on_the_groups_partition(task_dir: Path, tiny_model_dir: Path,
                                                                      tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LM_EVAL_CONTAM_HOME", str(tmp_path / "home"))
    out = tmp_path / "audit"
    assert cli_main(["audit", "--model", str(tiny_model_dir), "--label", "tiny", "--include_path", str(task_dir),
                     "--tasks", "bench_group", "--methods", "likelihood,reordered", "--batch_size", "16",
                     "--output_path", str(out)]) == 0
    audit = json.loads((out / "audit.json").read_text())
    assert audit["partitions"] == ["partitions/task_bench_group_test.yaml"]
    assert audit["settings"]["task_groups"] == [["bench_group", "bench_group test"]]
    card = (out / "partitions" / "task_bench_group_test.yaml").read_text()
    assert card.startswith("# Written by `lm-eval-contam audit --tasks`: 40 rendered evaluation docs drawn across the "
                           "2 subtasks of lm-eval group 'bench_group'.\n")
    verdicts = collect(load_run(out))
    assert {v.partition for v in verdicts} == {"bench_group test"}
    control = next(v for v in verdicts if v.test == "likelihood_control")
    assert control.pvalue is not None and 0.0 < control.pvalue <= 1.0, control.evidence.summary()  # the check passed
    assert control.n == 80  # every item of both sides (40 + 40), not the 24 of the group's sample
    assert [v.partition for v in partition_verdicts(verdicts)] == ["bench_group test"]
    results = json.loads(sorted((out / "runs" / "tiny").rglob("results_*.json"))[-1].read_text())["results"]
    for subtask in SIZES:  # the score adjustments stay per subtask, beside each subtask's own score
        assert 0.0 <= results[subtask]["acc_reordered,none"] <= 1.0
    assert capsys.readouterr().out.splitlines()[-1] == "bench_group (tiny): 0 of 1 partition(s) contaminated"


def test_per_subtask_needs_tasks(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "audit"
    assert cli_main(["audit", "--per-subtask", "--output_path", str(out)]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "field '--per-subtask': gives each subtask of a --tasks group its own partition; without --tasks there is no "
        "group: leave it out, or audit with --tasks")
    assert not out.exists()
