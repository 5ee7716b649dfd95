"""The package's folders are its layers: every import points down the list below, and method families never import
each other (what two methods share lives in ``kit/`` or ``core/``). Read from the source with ``ast``, nothing run."""

from __future__ import annotations

import ast
from pathlib import Path

import lm_eval_contam

PACKAGE = Path(lm_eval_contam.__file__).parent
# Bottom to top: a module may import its own folder and the folders before it.
LAYERS = ("core", "models", "lmeval", "kit", "verdicts", "reportkit", "methods", "harness", "contaminate", "audit",
          "report", "nullstudy", "cli")
TOP_LEVEL = {"__init__.py", "__main__.py", "py.typed"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """The ``lm_eval_contam`` modules (or packages) one file imports, at any depth of the file."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}: a relative import"
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name.startswith("lm_eval_contam.")}


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def family_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "methods" else None


def sources() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if "task_configs" not in path.parts)


def test_the_top_level_is_the_layers():
    entries = {path.name for path in PACKAGE.iterdir() if path.name != "__pycache__" and not path.name.startswith(".")}
    assert entries - TOP_LEVEL == set(LAYERS)


def test_imports_point_down_the_layers():
    upward = []
    for path in sources():
        here = module_name(path)
        if layer_of(here) is None:  # the package's own __init__ and __main__ sit above every layer
            continue
        for imported in imported_modules(path):
            there = layer_of(imported)
            if there is not None and LAYERS.index(there) > LAYERS.index(layer_of(here)):
                upward.append(f"{here} -> {imported}")
    assert upward == []


def test_method_families_never_import_each_other():
    crossing = []
    for path in sources():
        here = family_of(module_name(path))
        for imported in imported_modules(path):
            there = family_of(imported)
            if here and there and here != there:
                crossing.append(f"{module_name(path)} -> {imported}")
    assert crossing == []


def test_the_reader_sees_an_upward_and_a_crossing_import(tmp_path):
    """The checks above can fail: the reader finds both kinds of import in a file written for the purpose."""
    probe = tmp_path / "probe.py"
    probe.write_text("from lm_eval_contam.cli import main\nimport lm_eval_contam.methods.dcq.quiz\n")
    found = imported_modules(probe)
    assert found == {"lm_eval_contam.cli.main", "lm_eval_contam.methods.dcq.quiz"}
    assert LAYERS.index(layer_of("lm_eval_contam.cli.main")) > LAYERS.index("core")
    assert family_of("lm_eval_contam.methods.dcq.quiz") == "dcq" != family_of("lm_eval_contam.methods.dcr.sheet")
