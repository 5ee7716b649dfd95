"""The report as a person sees it: the demo's kind of report in headless Chromium at 1280 px wide.

The run directory is written by hand (lm-eval's own file layout, no model run): two models (clean, contaminated) x
Toy News train and test, each audited as the demo does (Time Travel in both prompt styles with logged samples, DCQ by
loglikelihood, the three likelihood modes). Chromium (Debian's ``chromium``) loads a copy of ``report.html`` with a
small probe script appended, which writes the page's layout into the DOM that ``--dump-dom`` prints; a second call
saves a screenshot. Skipped only where Chromium is missing outside CI (``.ci/run`` installs it and sets
``LM_EVAL_CONTAM_CI``, so there a missing browser fails).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from lm_eval_contam.report import write_report

WIDTH, HEIGHT = 1280, 800
DATE = "2026-11-25T09-00-00.000000"
SPLITS = ("train", "test")
# What the probe reports: the page's width against the window, the matrix's box, and the page width again with every
# <details> opened (the per-instance tables).
PROBE = """<script>
const box = document.querySelector("table.matrix").getBoundingClientRect();
const probe = {viewport: document.documentElement.clientWidth, page: document.documentElement.scrollWidth,
               matrix: {top: box.top, bottom: box.bottom, left: box.left, right: box.right}};
document.querySelectorAll("details").forEach((d) => { d.open = true; });
probe.page_open = document.documentElement.scrollWidth;
document.body.setAttribute("data-probe", JSON.stringify(probe));
</script>"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}", *args],
                          capture_output=True, text=True, timeout=120, check=True)


def layout_probe(binary: str, page: Path, work: Path) -> dict:
    """The page's layout at WIDTH x HEIGHT, measured by the probe script in a copy of the page."""
    probed = work / "probe.html"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = _run_chromium(binary, work / "profile", "--dump-dom", probed.as_uri()).stdout
    (found,) = re.findall(r'data-probe="([^"]*)"', dom)
    return json.loads(html.unescape(found))


def screenshot(binary: str, page: Path, png: Path, work: Path) -> tuple[int, int]:
    """Save the first screen of ``page`` as ``png``; returns the PNG's (width, height)."""
    _run_chromium(binary, work / "profile", f"--screenshot={png}", page.as_uri())
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", header[16:24])


def _tt_metrics(p: float, permutation_p: float, exact: int, near: int) -> dict:
    return {"rougeL_guided": 0.40 if exact else 0.05, "rougeL_general": 0.04, "alg1_pvalue": p,
            "alg1_contaminated": float(p <= 0.05), "alg1_permutation_pvalue": permutation_p, "exact_matches": exact,
            "near_exact_matches": near, "alg2_contaminated": float(exact >= 1 or near >= 2)}


def _dcq_metrics(p: float, dcq_max: float, chance: float) -> dict:
    return {"dcq_pvalue": 1.0, "dcq_pvalue_null": p, "dcq_max": dcq_max, "dcq_min": 0.0, "dcq_kappa": 0.0,
            "dcq_max_ci_low": 0.0, "dcq_max_ci_high": 0.24, "dcq_unparseable": 0.0, "dcq_chance_max": chance,
            **{f"dcq_bdq_{x}": rate for x, rate in zip("ABCDE", (0.0, 0.67, 0.33, 0.0, 0.0))},
            **{f"dcq_bcq_{x}": rate for x, rate in zip("ABCD", (0.0, 0.58, 0.42, 0.0))}}


# (model, split) -> each task's metrics: the demo's shape, with the injected partition caught by generation and
# likelihood and the unseen sibling flagged only by the paper's Alg. 1 (shown beside the verdict, not driving it).
NUMBERS = {
    ("clean", "train"): dict(tt=(0.52, 0.61, 0, 0), tt_c=(0.40, 0.50, 0, 0), dcq=(1.0, 0.0, 0.07),
                             control=(0.13, 0.20), lift=0.57, options=0.66),
    ("clean", "test"): dict(tt=(0.58, 0.70, 0, 0), tt_c=(0.31, 0.44, 0, 0), dcq=(0.76, 0.08, 0.16),
                            control=(0.87, 0.79), lift=0.48, options=0.71),
    ("contaminated", "train"): dict(tt=(0.00001, 0.00098, 0, 3), tt_c=(0.00001, 0.00098, 12, 0),
                                    dcq=(1.0, 0.0, 0.07), control=(0.00001, 0.0002), lift=0.002, options=0.03),
    ("contaminated", "test"): dict(tt=(0.008, 0.0625, 0, 0), tt_c=(0.03, 0.09, 0, 0), dcq=(1.0, 0.0, 0.1),
                                   control=(1.0, 0.99), lift=0.011, options=0.95),
}


def _samples(exact: int) -> list[dict]:
    """Time Travel's logged samples: 12 instances, long completions and one long unbroken token included."""
    rows = []
    for doc_id in range(12):
        reference = f"the council approved the harbour budget after a long debate on item {doc_id}."
        guided = reference if doc_id < exact else "a report on the weather and the markets " * 6
        general = "https://example.org/" + "very-long-unbroken-path-" * 12 if doc_id == 0 else "news of the day"
        rows.append({"doc_id": doc_id, "doc": {"first_piece": f"Story {doc_id}: the city council met on Monday.",
                                               "reference": reference},
                     "filtered_resps": [guided, general], "rougeL_guided": 1.0 if doc_id < exact else 0.1,
                     "rougeL_general": 0.0, "alg2_contaminated": {"match": "exact" if doc_id < exact else "inexact"}})
    return rows


def _model_results(label: str) -> tuple[dict, dict[str, list[dict]]]:
    results: dict = {"results": {}, "configs": {}, "n-samples": {},
                     "config": {"model": "hf", "model_args": f"pretrained=/models/{label}"}, "model_name": label}
    samples = {}

    def add(task: str, metrics: dict, metadata: dict, split: str, **config) -> None:
        results["results"][task] = {f"{name},none": value for name, value in metrics.items()}
        results["configs"][task] = {"test_split": split, **config,
                                    "metadata": {"dataset": "toy_news", "version": 1.0, **metadata}}
        results["n-samples"][task] = {"original": 12, "effective": 12}

    for split in SPLITS:
        numbers = NUMBERS[(label, split)]
        for suffix, style, key in (("", "instruct", "tt"), ("_completion", "completion", "tt_c")):
            task = f"timetravel_toy_news_{split}{suffix}"
            add(task, _tt_metrics(*numbers[key]), {"method": "timetravel", "prompt_style": style}, split)
            samples[task] = _samples(numbers[key][2])
        add(f"dcq_toy_news_{split}_ll", _dcq_metrics(*numbers["dcq"]), {"method": "dcq"}, split,
            output_type="loglikelihood")
        sibling = "test" if split == "train" else "train"
        control_p, zlib_p = numbers["control"]
        add(f"likelihood_toy_news_{split}", {"per_byte_partition": -0.955, "per_byte_control": -1.023,
                                             "per_byte_pvalue": control_p, "zlib_partition": -2.1,
                                             "zlib_control": -2.2, "zlib_pvalue": zlib_p},
            {"method": "likelihood", "mode": "control", "control": {"kind": "split", "source": sibling}}, split)
        add(f"likelihood_toy_news_{split}_lift", {"lift_own": 0.04, "lift_other": 0.01, "lift_pvalue": numbers["lift"],
                                                  "lift_own_pvalue": numbers["lift"]},
            {"method": "likelihood", "mode": "lift"}, split)
        add(f"likelihood_toy_news_{split}_options", {"gap_partition": 0.05, "gap_control": 0.03,
                                                     "gap_pvalue": numbers["options"]},
            {"method": "likelihood", "mode": "options", "control": {"kind": "split", "source": sibling}}, split)
    return results, samples


def write_demo_run(root: Path) -> Path:
    """An audit directory of the demo's kind (see the module docstring); returns it."""
    manifest = {"injected": {"sources": [{"partition": "toy_news:train", "format": "timetravel",
                                          "rows": list(range(12))}], "num_texts": 12},
                "settings": {"epochs": 6, "learning_rate": 3e-4}, "corpus": {"contaminant_share": 0.5}}
    models = []
    for label in ("clean", "contaminated"):
        directory = root / "runs" / label / "model"
        directory.mkdir(parents=True)
        results, samples = _model_results(label)
        (directory / f"results_{DATE}.json").write_text(json.dumps(results))
        for task, rows in samples.items():
            (directory / f"samples_{task}_{DATE}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
        models.append({"label": label, "model": "hf", "model_args": f"pretrained=/models/{label}",
                       "run_dir": f"runs/{label}", "injection": manifest if label == "contaminated" else None})
    (root / "audit.json").write_text(json.dumps({"version": 1, "partitions": ["toy_news:train", "toy_news:test"],
                                                 "settings": {"dcq_mode": "loglikelihood"}, "models": models}))
    return root


@pytest.fixture(scope="module")
def browser() -> str:
    found = chromium()
    if found is None:
        if os.environ.get("LM_EVAL_CONTAM_CI"):
            pytest.fail("CI must have Debian's chromium for the report screenshot test (see .ci/run)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def test_demo_report_fits_the_window_with_the_matrix_on_the_first_screen(browser: str, tmp_path: Path) -> None:
    written = write_report(write_demo_run(tmp_path / "demo"), out_dir=tmp_path / "report")
    page = written.html_path.read_text()
    # The run is what the test meant: 4 rows, the injected partition contaminated by fired driving tests.
    assert page.count('<td class="verdict flag"') == 1 and page.count('<td class="verdict ok"') == 3
    assert "fired" in page and "hit aside" in page

    probe = layout_probe(browser, written.html_path, tmp_path)
    print(f"\nlayout at {WIDTH} px: {probe}")
    assert probe["viewport"] <= WIDTH
    assert probe["page"] <= probe["viewport"], "the page scrolls sideways"
    assert probe["page_open"] <= probe["viewport"], "with the details opened, the page scrolls sideways"
    matrix = probe["matrix"]
    assert 0 < matrix["top"] < HEIGHT and matrix["bottom"] <= HEIGHT, "the matrix is not on the first screen"
    assert 0 <= matrix["left"] and matrix["right"] <= probe["viewport"]

    png = tmp_path / "report.png"
    assert screenshot(browser, written.html_path, png, tmp_path) == (WIDTH, HEIGHT)
