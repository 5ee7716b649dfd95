"""Write the thin per-partition task YAMLs of every generated family into task_configs/.

Each family module ``lm_eval_contam.<family>.configs`` exposes
``render_task_configs() -> dict[str, str]`` mapping a path relative to
``task_configs/<family>/`` to its YAML text. ``--check`` exits 1 when a checked-in
file differs from what would be generated (tests run it).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

REPO_TASK_DIR = Path(__file__).resolve().parent.parent / "task_configs"
# Families whose per-partition YAMLs are generated rather than hand-written.
FAMILIES: list[str] = ["timetravel", "dcr", "dcq", "likelihood", "incontext"]


def rendered_files() -> dict[Path, str]:
    files: dict[Path, str] = {}
    for family in FAMILIES:
        module = importlib.import_module(f"lm_eval_contam.{family}.configs")
        for relative, text in module.render_task_configs().items():
            files[REPO_TASK_DIR / family / relative] = text
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="only report files that are out of date")
    args = parser.parse_args(argv)
    stale = []
    for path, text in rendered_files().items():
        if path.is_file() and path.read_text() == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path.relative_to(REPO_TASK_DIR.parent)}")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
