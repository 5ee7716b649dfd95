"""The checked-in per-partition task YAMLs are exactly what the generator writes (the one freshness check)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "generate_task_configs.py"


def test_generated_task_configs_are_current() -> None:
    check = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout == "", check.stdout


def test_a_fresh_render_is_the_shipped_generated_tree_byte_for_byte(tmp_path: Path) -> None:
    """Rendered from the registry into an empty directory, the generated files are exactly the checked-in ones
    (none missing, none extra, every byte the same)."""
    run = subprocess.run([sys.executable, str(SCRIPT), "--task-dir", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    rendered = {path.relative_to(tmp_path): path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    shipped_dir = SCRIPT.parent.parent / "task_configs"
    shipped = {path.relative_to(shipped_dir): path.read_bytes() for path in shipped_dir.rglob("*.yaml")
               if path.read_bytes().startswith(b"# Generated")}
    assert len(rendered) > 200 and rendered == shipped


def test_the_one_renderer_quotes_metadata_unless_verbatim_and_writes_both_tag_forms() -> None:
    from lm_eval_contam.core.partitions import Partition
    from lm_eval_contam.lmeval.task_yaml import Verbatim, shipped_include, shipped_path, thin_task_yaml

    sample, hub = Partition.parse("toy_news:train"), Partition.parse("ag_news:test")
    assert (shipped_include(sample), shipped_path(sample, "x")) == ("../_template_yaml", "samples/x.yaml")
    assert (shipped_include(hub), shipped_path(hub, "x")) == ("_template_yaml", "x.yaml")
    assert thin_task_yaml(header="# one\n# two", include="t", task="x", tag="a", partition=hub, settings=["k: v"],
                          metadata={"method": Verbatim("m"), "seed": 0, "name": "n"}) == (
        "# one\n# two\ninclude: t\ntask: x\ntag: a\ndataset_path: fancyzhx/ag_news\ntest_split: test\nk: v\n"
        'metadata:\n  method: m\n  seed: 0\n  name: "n"\n')
    assert thin_task_yaml(header="", include="t", task="x", tag=["a", "b"], metadata={}) == (
        "include: t\ntask: x\ntag: [a, b]\nmetadata:\n")
