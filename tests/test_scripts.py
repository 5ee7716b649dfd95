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
