"""Every relative link in the README and docs/ resolves (file and heading), and every docs/ path the code, tests,
scripts and task READMEs name exists: the user guides live in docs/guide/, the study records in docs/studies/."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
DOCS_PATH = re.compile(r"(?<![\w/.])((?:\.\./)*docs/[\w\-/]+\.(?:md|png))")


def _markdown_files():
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "task_configs").rglob("*.md"))]


def _slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path):
    return {_slug(re.sub(r"^#+ ", "", line)) for line in path.read_text().splitlines() if re.match(r"^#+ ", line)}


def test_every_relative_link_resolves():
    broken = []
    for page in _markdown_files():
        for target in LINK.findall(page.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path) if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_every_docs_path_named_in_code_exists():
    missing = []
    folders = ["lm_eval_contam", "tests", "scripts", "task_configs", ".ci"]
    files = [f for d in folders for f in (ROOT / d).rglob("*") if f.is_file() and f.suffix in {".py", ".sh", ".md", ".yaml", ""}]
    for f in [*files, ROOT / "README.md", ROOT / "pyproject.toml", *(ROOT / "docs").rglob("*.md")]:
        try:
            text = f.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for named in DOCS_PATH.findall(text):
            base = f.parent if named.startswith("../") else ROOT
            if not (base / named).exists():
                missing.append(f"{f.relative_to(ROOT)}: {named}")
    assert not missing, "\n".join(missing)


def test_guides_and_study_records_do_not_share_a_folder():
    assert not [p.name for p in (ROOT / "docs").glob("*.md") if p.name not in {"architecture.md", "changelog.md"}]
    assert (ROOT / "docs" / "guide" / "verdicts.md").is_file()
    assert (ROOT / "docs" / "studies" / "validation-study.md").is_file()
