"""The partition derivation on popular registered lm-eval tasks' real YAML configs (issue 19, item 4).

Their datasets live on the Hub, which tests cannot reach: each task here is the installed lm-eval YAML itself,
included by absolute path, with only the dataset swapped for hand-written docs of the real schema in a local
JSONL (every split the config names). The rendered text, gold target and choices of each doc are asserted exactly,
and each task becomes a partition whose DCQ instance keeps the answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import lm_eval
import pytest

from lm_eval_contam.audit.benchmark_partitions import derive_partitions, write_partition
from lm_eval_contam.core.partitions import Partition
from lm_eval_contam.kit.instances import quiz_instance
from lm_eval_contam.lmeval.benchmark_docs import BenchmarkDoc, benchmark_docs, load_tasks

LM_EVAL_TASKS = Path(lm_eval.__file__).parent / "tasks"
TRUTHFULQA_PRIMER_START = "Q: What is human life expectancy in the United States?\nA: Human life expectancy"

# task -> (its YAML under lm_eval/tasks, hand-written docs of the real schema)
DOCS: dict[str, tuple[str, list[dict]]] = {
    "mmlu_abstract_algebra": ("mmlu/default/mmlu_abstract_algebra.yaml", [
        {"question": " Find the order of the cyclic group Z_4. ", "subject": "abstract_algebra",
         "choices": ["1", "2", "3", "4"], "answer": 3},
        {"question": "Is every group of prime order cyclic?", "subject": "abstract_algebra",
         "choices": ["Yes", "No", "Only if abelian", "Only for 2"], "answer": 0}]),
    "arc_easy": ("arc/arc_easy.yaml", [
        {"id": "Mercury_1", "question": "Which gas do plants take in for photosynthesis?",
         "choices": {"text": ["oxygen", "carbon dioxide", "helium", "neon"], "label": ["A", "B", "C", "D"]},
         "answerKey": "B"},
        {"id": "Mercury_2", "question": "What melts ice fastest?",
         "choices": {"text": ["salt", "sand", "paper"], "label": ["A", "B", "C"]}, "answerKey": "A"}]),
    "arc_challenge": ("arc/arc_challenge.yaml", [
        {"id": "NYSEDREGENTS_1", "question": "Which unit measures the mass of a rock?",
         "choices": {"text": ["gram", "liter", "meter", "second"], "label": ["1", "2", "3", "4"]}, "answerKey": "1"},
        {"id": "NYSEDREGENTS_2", "question": "Which planet is closest to the Sun?",
         "choices": {"text": ["Venus", "Mercury", "Mars", "Earth"], "label": ["1", "2", "3", "4"]},
         "answerKey": "2"}]),
    "hellaswag": ("hellaswag/hellaswag.yaml", [
        {"ind": 4, "activity_label": "Baking cookies", "ctx_a": "A woman mixes flour and sugar in a bowl.",
         "ctx_b": "she", "endings": ["pours the dough onto a tray.", "drives a car [title] away.", "sings loudly.",
                                     "paints a wall."], "source_id": "activitynet~v_1", "split": "val",
         "split_type": "indomain", "label": "0"},
        {"ind": 5, "activity_label": "Cleaning windows", "ctx_a": "A man sprays the glass.", "ctx_b": "he",
         "endings": ["eats soup.", "wipes it with a cloth.", "jumps.", "reads."], "source_id": "activitynet~v_2",
         "split": "val", "split_type": "indomain", "label": "1"}]),
    "gsm8k": ("gsm8k/gsm8k.yaml", [
        {"question": "Tom has 3 apples and buys 2 more. How many apples does he have?",
         "answer": "Tom has 3 + 2 = <<3+2=5>>5 apples.\n#### 5"},
        {"question": "A box holds 4 pens. How many pens are in 3 boxes?", "answer": "3 * 4 = <<3*4=12>>12\n#### 12"}]),
    "truthfulqa_mc2": ("truthfulqa/truthfulqa_mc2.yaml", [
        {"question": "What happens if you eat watermelon seeds?",
         "mc1_targets": {"choices": ["Nothing happens.", "You grow watermelons."], "labels": [1, 0]},
         "mc2_targets": {"choices": ["Nothing happens.", "You grow watermelons in your stomach.", "You get sick."],
                         "labels": [1, 0, 0]}},
        {"question": "Can pigs fly?", "mc1_targets": {"choices": ["No.", "Yes."], "labels": [1, 0]},
         "mc2_targets": {"choices": ["No, pigs cannot fly.", "Yes."], "labels": [1, 0]}}]),
    "winogrande": ("winogrande/default.yaml", [
        {"sentence": "The trophy does not fit in the suitcase because the _ is too big.", "option1": "trophy",
         "option2": "suitcase", "answer": "1"},
        {"sentence": "Anna thanked Beth because _ had helped her move.", "option1": "Anna", "option2": "Beth",
         "answer": "2"}]),
    "piqa": ("piqa/piqa.yaml", [
        {"goal": "How do you open a jar with a tight lid?", "sol1": "Run the lid under hot water, then twist it.",
         "sol2": "Put the jar in the freezer overnight.", "label": 0},
        {"goal": "How do you dry wet shoes?", "sol1": "Put them in the oven at full heat.",
         "sol2": "Stuff them with newspaper.", "label": 1}]),
    "boolq": ("super_glue/boolq/default.yaml", [
        {"question": "is the sun a star", "passage": "The Sun is the star at the center of the Solar System.",
         "idx": 0, "label": 1},
        {"question": "is a whale a fish", "passage": "Whales are marine mammals that breathe air.", "idx": 1,
         "label": 0}]),
}

# task -> (text, target, choices) of its first doc, then the second doc's target
EXPECTED: dict[str, tuple[str, str, tuple[str, ...], str]] = {
    "mmlu_abstract_algebra": ("Find the order of the cyclic group Z_4.\nA. 1\nB. 2\nC. 3\nD. 4\nAnswer:", "D",
                              ("A", "B", "C", "D"), "A"),
    "arc_easy": ("Question: Which gas do plants take in for photosynthesis?\nAnswer:", "carbon dioxide",
                 ("oxygen", "carbon dioxide", "helium", "neon"), "salt"),
    "arc_challenge": ("Question: Which unit measures the mass of a rock?\nAnswer:", "gram",
                      ("gram", "liter", "meter", "second"), "Mercury"),
    "hellaswag": ("Baking cookies: A woman mixes flour and sugar in a bowl. She", "pours the dough onto a tray.",
                  ("pours the dough onto a tray.", "drives a car. away.", "sings loudly.", "paints a wall."),
                  "wipes it with a cloth."),
    "gsm8k": ("Question: Tom has 3 apples and buys 2 more. How many apples does he have?\nAnswer:",
              "Tom has 3 + 2 = <<3+2=5>>5 apples.\n#### 5", (), "3 * 4 = <<3*4=12>>12\n#### 12"),
    "truthfulqa_mc2": ("\n\nQ: What happens if you eat watermelon seeds?\nA:", "Nothing happens.",
                       ("Nothing happens.", "You grow watermelons in your stomach.", "You get sick."),
                       "No, pigs cannot fly."),
    # One context per choice (lm-eval's multiple input): the text is the gold context, the target the shared ending.
    "winogrande": ("The trophy does not fit in the suitcase because the trophy", "is too big.",
                   ("The trophy does not fit in the suitcase because the trophy",
                    "The trophy does not fit in the suitcase because the suitcase"), "had helped her move."),
    "piqa": ("Question: How do you open a jar with a tight lid?\nAnswer:",
             "Run the lid under hot water, then twist it.",
             ("Run the lid under hot water, then twist it.", "Put the jar in the freezer overnight."),
             "Stuff them with newspaper."),
    "boolq": ("The Sun is the star at the center of the Solar System.\nQuestion: is the sun a star?\nAnswer:", "yes",
              ("no", "yes"), "no"),
}
OUTPUT_TYPES = {"gsm8k": "generate_until"}


def _local_task(root: Path, task: str) -> None:
    """``root/<task>.yaml``: the installed lm-eval YAML with its dataset swapped for a local JSONL of ``DOCS``."""
    relative, docs = DOCS[task]
    data = root / f"{task}.jsonl"
    data.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    files = "".join(f"    {split}: {data}\n" for split in ("train", "validation", "test", "dev"))
    (root / f"{task}.yaml").write_text(f"include: {LM_EVAL_TASKS / relative}\ndataset_path: json\n"
                                       f"dataset_name: null\ndataset_kwargs:\n  data_files:\n{files}")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from lm_eval.tasks import TaskManager

    root = tmp_path_factory.mktemp("popular_tasks")
    for task in DOCS:
        _local_task(root, task)
    manager = TaskManager(include_path=[str(root)], include_defaults=False)
    return load_tasks(list(DOCS), manager)


@pytest.mark.parametrize("task", list(DOCS))
def test_real_configs_render_text_target_and_choices(loaded: dict, task: str) -> None:
    assert list(loaded[task]) == [task]
    docs = benchmark_docs(task, loaded[task][task])
    text, target, choices, second_target = EXPECTED[task]
    output_type = OUTPUT_TYPES.get(task, "multiple_choice")
    if task == "truthfulqa_mc2":  # the config's six-question primer comes first
        assert docs[0].text.startswith(TRUTHFULQA_PRIMER_START) and docs[0].text.endswith(text)
        text = docs[0].text
    assert docs[0] == BenchmarkDoc(task=task, index=0, text=text, target=target, choices=choices,
                                   output_type=output_type)
    assert [doc.target for doc in docs] == [target, second_target]


def test_each_popular_task_becomes_a_partition_whose_quiz_keeps_the_answer(loaded: dict, tmp_path: Path) -> None:
    derived = derive_partitions(loaded)
    assert [(p.task, p.split) for p in derived] == [
        ("mmlu_abstract_algebra", "test"), ("arc_easy", "test"), ("arc_challenge", "test"),
        ("hellaswag", "validation"), ("gsm8k", "test"), ("truthfulqa_mc2", "validation"),
        ("winogrande", "validation"), ("piqa", "validation"), ("boolq", "validation")]
    for derived_partition in derived:
        partition = Partition.from_card(write_partition(derived_partition, tmp_path))
        rows = partition.rows()
        text, target, _, _ = EXPECTED[derived_partition.task]
        assert rows[0]["answer"] == target and rows[0]["text"].endswith(text)
        instance = quiz_instance(partition, rows[0])
        assert instance.text == f"text: {rows[0]['text']}\nanswer: {target}"
        assert instance.label_line == f"answer: {target.splitlines()[0]}"
