"""Every reference in the tree resolves: a `docs/….md` path named in code, tests or docs
exists; a Markdown link between the docs leads to a file (and, with `#anchor`, to one of its
headings); a section cited by title ("design.md, "Regression rule"") is a heading of that
page; the design is cited as docs/design.md, never as a file outside the repository; and no
text says "issue N" (a number means nothing to a reader without the tracker: say what the
behaviour is)."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TEXT = {".py", ".md", ".toml", ".yaml", ".yml", ".sh", ".cfg", ".txt", ".rst", ".ini", ""}
#: files that may hold the patterns below on purpose: this test spells them out
ALLOWED = {"tests/unit/test_references_resolve.py"}
#: recorded third-party text, kept byte for byte
RECORDED = ("tests/fixtures/", "tests/corpus/files/")

DOC_PATH = re.compile(r"(?<![\w/.-])docs/([A-Za-z0-9_./-]+?\.md)\b")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
CITED = re.compile(r"\b([a-z][a-z0-9_-]*)\.md(?:\]\([^)]*\))?,? \"([^\"]+)\"")
ISSUE = re.compile(r"\bissues? ?(?:#|no\.? ?)?\d+\b", re.IGNORECASE)
OUTSIDE = re.compile(r"\bDESIGN\.md\b|\.\./shared/")


def tracked() -> list[Path]:
    """The repository's text files (``git ls-files``; every file under ROOT without git)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if ".git" not in p.parts]
    files = []
    for name in names:
        path = ROOT / name
        if name in ALLOWED or name.startswith(RECORDED) or not path.is_file():
            continue
        if path.suffix in TEXT or path.name.startswith(("Makefile", "Dockerfile")):
            files.append(path)
    return files


@cache
def text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


@cache
def headings(doc: Path) -> tuple[str, ...]:
    return tuple(m.group(1).strip() for m in re.finditer(r"^#{1,6} (.+)$", text(doc), re.MULTILINE))


@cache
def sections(doc: Path) -> tuple[str, ...]:
    """What a citation by title may name: a heading, a bold item (``- **Title**``) or a
    paragraph's lead-in (``Title: …``), in lower case."""
    leads = re.findall(r"^(?:[-*] )?\*\*([^*]+)\*\*|^([A-Z][^:\n]{2,60}):", text(doc), re.MULTILINE)
    return tuple(h.lower() for h in headings(doc)) + tuple((a or b).lower() for a, b in leads)


def anchor(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading (GitHub's rule): lower case, spaces to
    hyphens, punctuation dropped."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def where(path: Path, text_: str, pos: int) -> str:
    return f"{path.relative_to(ROOT)}:{text_.count(chr(10), 0, pos) + 1}"


def test_every_docs_path_named_in_the_tree_exists():
    missing = [
        f"{where(p, text(p), m.start())}: docs/{m.group(1)}"
        for p in tracked()
        for m in DOC_PATH.finditer(text(p))
        if not (DOCS / m.group(1)).is_file()
    ]
    assert not missing, "\n".join(missing)


def test_every_link_between_the_docs_leads_somewhere():
    broken = []
    for doc in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for m in MD_LINK.finditer(text(doc)):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):  # http(s):, mailto:: not ours to check here
                continue
            file, _, frag = target.partition("#")
            dest = (doc.parent / file).resolve() if file else doc
            if not dest.exists():
                broken.append(f"{where(doc, text(doc), m.start())}: {target}")
            elif frag and dest.suffix == ".md" and frag not in map(anchor, headings(dest)):
                broken.append(f"{where(doc, text(doc), m.start())}: no heading for #{frag}")
    assert not broken, "\n".join(broken)


def test_every_section_cited_by_title_is_a_heading_of_its_page():
    wrong = []
    for p in tracked():
        for m in CITED.finditer(text(p)):
            doc = DOCS / f"{m.group(1)}.md"
            if not doc.is_file():
                continue  # a file of another project (upstream's doc/PERFORMANCE.md, …)
            title = " ".join(m.group(2).replace("\\'", "'").split()).lower()
            if not any(s.startswith(title) for s in sections(doc)):
                wrong.append(f"{where(p, text(p), m.start())}: {m.group(0)}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    "pattern,advice",
    [
        (ISSUE, "say what the behaviour is, not the number of the issue that asked for it"),
        (OUTSIDE, "cite docs/design.md (the design lives in the repository)"),
    ],
    ids=["issue numbers", "files outside the repository"],
)
def test_no_reference_leads_out_of_the_repository(pattern, advice):
    found = [
        f"{where(p, text(p), m.start())}: {m.group(0)!r}"
        for p in tracked()
        for m in pattern.finditer(text(p))
    ]
    assert not found, f"{advice}:\n" + "\n".join(found)


def test_the_patterns_find_what_they_are_for():
    """The checks above can fail: each pattern matches the text it is meant to refuse."""
    assert ISSUE.search("as issue 11 asks") and ISSUE.search("Issue #36") is not None
    assert not ISSUE.search("pytorch/pytorch#126942 and a known issue")
    assert OUTSIDE.search("the layering of DESIGN.md") and not OUTSIDE.search("docs/design.md")
    assert DOC_PATH.search("see docs/cli.md, exit codes").group(1) == "cli.md"
    m = CITED.search('[design.md](design.md), "The pages valorch replaces"')
    assert m and m.groups() == ("design", "The pages valorch replaces")
    assert anchor("Beyond one node: multi-node tasks") == "beyond-one-node-multi-node-tasks"
