"""Write the thin task YAMLs every registered method ships into task_configs/.

The methods come from the registry (``lm_eval_contam.methods.catalogue`` registers the built-in ones and the installed
plug-ins): each one's ``MethodSpec.shipped_task_configs`` maps a path relative to ``task_configs/<method>/`` to its
YAML text. ``--check`` exits 1 when a checked-in file differs from what would be generated, or when a generated file
(its first line says so) is no longer rendered (tests run it); ``--task-dir`` writes elsewhere.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lm_eval_contam.core.registry import registered_methods, shipped_task_configs
from lm_eval_contam.methods.catalogue import plugins

REPO_TASK_DIR = Path(__file__).resolve().parent.parent / "task_configs"
GENERATED_MARK = "# Generated"  # the first line of every file a method renders


def orphans(task_dir: Path, rendered: dict[Path, str]) -> list[Path]:
    """Generated files under a shipping method's folder that it no longer renders."""
    found = []
    for spec in registered_methods():
        if spec.shipped_task_configs is None or not (task_dir / spec.name).is_dir():
            continue
        for path in sorted((task_dir / spec.name).rglob("*.yaml")):
            if path not in rendered and path.read_text(encoding="utf-8").startswith(GENERATED_MARK):
                found.append(path)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="only report files that are out of date")
    parser.add_argument("--task-dir", type=Path, default=REPO_TASK_DIR,
                        help="the task directory to write or check (default: the repository's task_configs/)")
    args = parser.parse_args(argv)
    task_dir = args.task_dir.resolve()
    for error in plugins().broken:  # a plug-in left out would have its files reported as not rendered
        raise SystemExit(f"generate_task_configs: error: {error}")
    rendered = shipped_task_configs(task_dir)
    stale = []
    for path, text in rendered.items():
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    left = orphans(task_dir, rendered)
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path.relative_to(task_dir.parent)}")
    for path in left:
        print(f"{'not rendered' if args.check else 'removed'}: {path.relative_to(task_dir.parent)}")
        if not args.check:
            path.unlink()
    return 1 if (args.check and (stale or left)) else 0


if __name__ == "__main__":
    sys.exit(main())
