"""A local lm-eval multiple-choice task the end-to-end tests write: ``Question: …`` / ``Answer:``, the options scored as
continuations (ARC-style), one JSONL split ``test`` of ``{"question", "choices", "answer"}`` rows."""

TASK_YAML = """task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: answer
doc_to_choice: choices
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""
