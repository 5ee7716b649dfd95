"""A local lm-eval multiple-choice task the end-to-end tests write, ``listed_mc``: the prompt lists the options
``A.``–``D.`` after the question and the choices are the letters (MMLU-style), one JSONL split ``test`` of
``{"question", "choices", "answer"}`` rows."""

from __future__ import annotations

import json
from pathlib import Path

ITEMS = [("Which tool cuts wood?", ["saw", "spoon", "pillow", "kettle"], 0),
         ("Which animal lays eggs?", ["horse", "hen", "goat", "cow"], 1),
         ("Which metal is liquid at room temperature?", ["iron", "copper", "mercury", "tin"], 2),
         ("Which planet has rings?", ["Mars", "Venus", "Mercury", "Saturn"], 3),
         ("Which organ pumps blood?", ["lung", "heart", "liver", "kidney"], 1),
         ("Which shape has three sides?", ["square", "circle", "pentagon", "triangle"], 3)]

TASK_YAML = """task: listed_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question}}}}\\nA. {{{{choices[0]}}}}\\nB. {{{{choices[1]}}}}\\nC. {{{{choices[2]}}}}\\nD. {{{{choices[3]}}}}\\nAnswer:"
doc_to_target: answer
doc_to_choice: ["A", "B", "C", "D"]
metric_list:
{metrics}"""

METRIC = """  - metric: {name}
    aggregation: mean
    higher_is_better: true
"""


def write_listed_mc_task(folder: Path, items: list = ITEMS, metrics: tuple[str, ...] = ("acc", "acc_norm")) -> Path:
    """Write ``items`` to ``folder/items.jsonl`` and the task, scoring ``metrics``, to ``folder/tasks/listed_mc.yaml``;
    return the tasks folder (what ``--include_path`` and the task manager take)."""
    data = folder / "items.jsonl"
    data.write_text("".join(json.dumps({"question": q, "choices": c, "answer": a}) + "\n" for q, c, a in items))
    tasks = folder / "tasks"
    tasks.mkdir()
    metric_list = "".join(METRIC.format(name=name) for name in metrics)
    (tasks / "listed_mc.yaml").write_text(TASK_YAML.format(data=data, metrics=metric_list))
    return tasks
