"""The checked-in per-partition task YAMLs are exactly what the generator writes (the one freshness check)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "generate_task_configs.py"


def test_generated_task_configs_are_current() -> None:
    check = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout == "", check.stdout
