"""The scripts import what exists: each loads (not run as __main__), every name it imports from the project (at the
top or inside a function, where the benchmarks defer their imports) exists, and the DCR threshold plot redraws the
shipped figure byte for byte."""

from __future__ import annotations

import ast
import pkgutil
import runpy
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.mark.parametrize("script", sorted(path.name for path in SCRIPTS.glob("*.py")))
def test_every_script_loads(script: str) -> None:
    assert callable(runpy.run_path(str(SCRIPTS / script), run_name="loaded")["main"])


@pytest.mark.parametrize("script", sorted(path.name for path in SCRIPTS.glob("*.py")))
def test_every_project_name_a_script_imports_exists(script: str) -> None:
    tree = ast.parse((SCRIPTS / script).read_text(encoding="utf-8"))
    imported = [(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("lm_eval_contam") for alias in node.names]
    for module, name in imported:
        assert pkgutil.resolve_name(f"{module}:{name}") is not None, f"{script}: {module}.{name}"


def test_the_dcr_threshold_plot_redraws_the_shipped_figure() -> None:
    chart = runpy.run_path(str(SCRIPTS / "plot_dcr_threshold.py"), run_name="loaded")["threshold_chart"]()
    assert chart == (SCRIPTS.parent / "task_configs" / "dcr" / "dcr_threshold.svg").read_text(encoding="utf-8")


def test_the_audit_benchmark_counts_each_forward_pass_once_for_the_benchmark_first(tmp_path: Path) -> None:
    import json

    counts = runpy.run_path(str(SCRIPTS / "bench_audit_tasks.py"), run_name="loaded")["request_counts"]

    def tokenizer(text: str, add_special_tokens: bool = True) -> dict:  # one token per word
        return {"input_ids": text.split()}

    configs = {"quiz": {"output_type": "multiple_choice"},
               "reordered_quiz": {"output_type": "multiple_choice", "metadata": {"method": "reordered"}},
               "optionorder_x": {"output_type": "loglikelihood_rolling", "metadata": {"method": "optionorder"}},
               "timetravel_x": {"output_type": "generate_until", "metadata": {"method": "timetravel"}},
               "incontext_x": {"output_type": "loglikelihood", "metadata": {"method": "incontext"}}}
    (tmp_path / "results_1.json").write_text(json.dumps({"configs": configs}))

    def letters(context: str) -> dict:
        return {f"gen_args_{i}": {"arg_0": context, "arg_1": f" {letter}"} for i, letter in enumerate("AB")}

    samples = {"quiz": [{"arguments": letters("Q one ?"), "resps": [[0], [0]]}],
               # the original form again (the benchmark's own pass) and one reordering
               "reordered_quiz": [{"arguments": letters("Q one ?"), "resps": [[0], [0]]},
                                  {"arguments": letters("Q one reordered ?"), "resps": [[0], [0]]}],
               "optionorder_x": [{"arguments": {"gen_args_0": {"arg_0": "a b c"}}, "resps": [[0]]}],
               "timetravel_x": [{"arguments": {"gen_args_0": {"arg_0": "go on", "arg_1": {}}}, "resps": [[" x y"]]}],
               # a prompt scored alone (no continuation): its text read once
               "incontext_x": [{"arguments": {"gen_args_0": {"arg_0": "d e f g"}}, "resps": [[0]]}]}
    for task, rows in samples.items():
        (tmp_path / f"samples_{task}_2026.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert counts(tmp_path, tokenizer) == {
        "benchmark": {"multiple_choice requests": 2, "passes": 1, "tokens": 4},  # "Q one ?" + one letter
        "reordered": {"multiple_choice requests": 4, "passes": 1, "tokens": 5},
        "optionorder": {"loglikelihood_rolling requests": 1, "passes": 1, "tokens": 3},
        "timetravel": {"generate_until requests": 1, "passes": 1, "tokens": 4},  # "go on" + " x y"
        "incontext": {"loglikelihood requests": 1, "passes": 1, "tokens": 4}}
