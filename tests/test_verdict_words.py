"""Every word the console and the report print for a verdict is explained in one place: docs/guide/verdicts.md,
"Words the verdicts use" (issue 50, item 4).

The phrases are taken from the code itself: the string literals of the functions, properties and constants that
make a verdict's words (``SOURCES``: its decision, why it makes no call, why it is shown beside the verdict, its role,
the caveats it carries, the console's line). Each literal piece of those strings (the text between an f-string's
placeholders) must appear in the guide's section, so a new word, role or caveat without an entry there fails here.
The reasons a method gives for "not tested: <why>" are sentences of their own and are covered by that one entry.
"""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide" / "verdicts.md"
SECTION = "## Words the verdicts use"

# Where the verdict words are made: module -> the names (a function, Class.method or module-level constant) whose
# string literals are words a verdict prints.
SOURCES = {
    "lm_eval_contam/core/method_verdict.py": ["Verdict.decision", "NotRunEvidence.summary", "TestRole",
                                             "single_instance_caveats", "sample_size_caveats"],
    "lm_eval_contam/core/stats.py": ["sign_flip_caveats"],
    "lm_eval_contam/verdicts/verdict.py": ["PartitionVerdict.decision", "PartitionVerdict.setting",
                                           "PartitionVerdict.summary", "no_call_reason",
                                           "stated_decision", "run_caveats", "study_size_caveats"],
    "lm_eval_contam/verdicts/detection_rates.py": ["clean_bill", "split_control_detection"],
    "lm_eval_contam/lmeval/context_window.py": ["truncation_caveat"],
    "lm_eval_contam/methods/likelihood/verdicts.py": ["SPLITS_DIFFER", "NO_UNITS", "TOO_FEW_UNITS", "NO_CONTROL", "split_level_caveats",
                                                      "control_size_caveats"],
    "lm_eval_contam/core/overlap.py": ["ControlOverlap.near_copies_note"],
    "lm_eval_contam/report/layout.py": ["NOT_MEASURED", "nothing_to_decide", "left_out_line", "aside_reason", "holm_text", "decision_text",
                                        "partition_line", "over_level_line", "MatrixCell.text", "MatrixCell.tooltip",
                                        "test_facts"],
    "lm_eval_contam/report/html.py": ["LEGEND", "_verdict_cell", "evidence_matrix"],
    "lm_eval_contam/cli/demo.py": ["verdict_lines"],
}
# Literal pieces in those sources that are not words a reader sees: the HTML's CSS classes (its legend's keys), and
# the demo's "flagged by: none".
NOT_WORDS = {"undecided", "flag", "hit", "miss", "none"}
# Calls whose string arguments are keys or field names, not printed words.
KEYED = {"get", "getattr", "setdefault", "_distinct"}


def _named(tree, name):
    """The node that defines ``name`` (``Class.attr`` inside a class) in a module's tree."""
    scope = tree.body
    *owners, last = name.split(".")
    for owner in owners:
        scope = next(node.body for node in scope if isinstance(node, ast.ClassDef) and node.name == owner)
    for node in scope:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == last:
            return node
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == last for t in node.targets):
            return node
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == last:
            return node
    raise LookupError(name)


def _pieces(node):
    """The literal text pieces of the strings under ``node``: docstrings, dict keys, comparisons and subscripts
    aside (they are keys and labels, not printed words)."""
    skip = set()
    for sub in ast.walk(node):
        body = getattr(sub, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))
        if isinstance(sub, ast.Compare):
            skip.update(id(n) for n in ast.walk(sub))
        if isinstance(sub, ast.Subscript) and not (isinstance(sub.value, ast.Name) and sub.value.id == "Literal"):
            skip.update(id(n) for n in ast.walk(sub.slice))
        if isinstance(sub, ast.Call) and (getattr(sub.func, "attr", None) or getattr(sub.func, "id", None)) in KEYED:
            skip.update(id(n) for arg in sub.args for n in ast.walk(arg))
        if isinstance(sub, ast.Dict):
            skip.update(id(n) for key in sub.keys if key is not None for n in ast.walk(key))
        if isinstance(sub, ast.JoinedStr):
            for value in sub.values:
                if isinstance(value, ast.FormattedValue) and value.format_spec is not None:
                    skip.update(id(n) for n in ast.walk(value.format_spec))
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and id(sub) not in skip:
            yield sub.value


def _normal(text):
    return re.sub(r"\s+", " ", text).strip()


def verdict_words():
    """Every printed piece of the sources, trimmed of the punctuation that joins it to a placeholder."""
    found = {}
    for module, names in SOURCES.items():
        tree = ast.parse((ROOT / module).read_text())
        for name in names:
            for piece in _pieces(_named(tree, name)):
                word = _normal(piece).strip(" ;:,.()'\"")
                if len(re.findall(r"[A-Za-z]", word)) >= 3 and word not in NOT_WORDS and not re.search(r"[<>=]", word):
                    found.setdefault(word, f"{module}: {name}")
    return found


def _section():
    text = GUIDE.read_text()
    assert SECTION in text, f"{GUIDE.relative_to(ROOT)} has no '{SECTION}' section"
    section = text.split(SECTION, 1)[1]
    return _normal(re.split(r"\n## ", section, maxsplit=1)[0]).replace("\\|", "|")


def test_every_verdict_word_is_in_the_guide():
    section = _section()
    missing = [f"{word!r} ({where})" for word, where in sorted(verdict_words().items()) if word not in section]
    assert not missing, ("verdict words with no entry in docs/guide/verdicts.md, 'Words the verdicts use':\n"
                         + "\n".join(missing))


def test_the_sources_still_make_verdict_words():
    """A source renamed or moved is found here, not silently dropped from the check above."""
    words = verdict_words()
    for phrase in ("contaminated", "not flagged", "no calibrated evidence", "not driving", "no call",
                   "not tested", "the splits differ", "level exact at any size", "the paper's own", "exploratory",
                   "drives the per-partition verdict (Holm", "over its level"):
        assert any(phrase in word for word in words), phrase


def test_the_readme_links_the_guide_from_how_to_read_a_verdict():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## How to read a verdict", 1)[1].split("\n## ", 1)[0]
    assert "docs/guide/verdicts.md#words-the-verdicts-use" in section
