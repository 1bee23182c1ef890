"""What one cell of a published image components table says, and what the page says
around the table. Pure: text in, values out.

A component cell states a version: its value is that version alone ("Python 3.12.4" is
3.12.4, `` `2.4.0 <url>`_ `` is 2.4.0, "tensorflow-rocm 2.17.0" is 2.17.0). A cell holding a
Sphinx role or substitution whose value is defined elsewhere (``:version-ref:`hipBLASLt
rocm_version```, ``|rocm-version|``) is resolved with the definitions given (``Defs``), or
left unread as "unresolved: ROLE": never a version string that is really markup.

Backend evidence: an image whose tag, repository or page names ROCm is a ROCm image, and its
ROCm version is the table's ROCm column, else the tag's ``rocmX.Y``, else the version the page
states for the table ("validated for ROCm 6.3.3"). Nothing is a default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..components import UNPINNED

# a version token: 3.12.4, 24.04, 5.3-1.0.5.0, 2.4.0+rocm6.3, 2.6.0rc1, llama.cpp's b5997;
# not a part of a word (py3.12, gfx942) nor of a URL path
VERSION = re.compile(
    r"(?<![\w./-])v?(\d+(?:\.\d+)*(?:-\d+(?:\.\d+)*)?(?:\.?(?:a|b|rc|post|dev)\d+)?"
    r"(?:\+[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?)(?![\w/])"
    r"|(?<![\w./-])(b\d{3,})(?![\w/])"
)
# a role that carries a value defined elsewhere (footnote marks, :doc: and :ref: links do not)
ROLE = re.compile(r":(?P<role>[A-Za-z][\w+-]*):`(?P<text>[^`]*)`")
SUBSTITUTION = re.compile(r"\|(?P<name>[^|\s][^|]*?)\|(?!_)")
LINK_ROLES = frozenset({"doc", "ref", "sup", "sub", "term", "abbr", "code", "literal", "strong"})
ABSENT = frozenset({"", "-", "—", "–", "n/a", "none"})
_PAGE_ROCM = re.compile(r"\bROCm\s+(\d+(?:\.\d+)+)")
_TAG_ROCM = re.compile(r"(?<![a-z])rocm[-_]?(\d+(?:\.\d+)*)", re.I)
_TAG_CUDA = re.compile(r"(?<![a-z])(?:cuda|cu)[-_]?(\d+(?:\.\d+)*)", re.I)
_VERSION_SET = re.compile(r"^\.\.\s+version-set::\s+(\S+)\s+(\S+)\s*$", re.M)
_REPLACE = re.compile(r"^\.\.\s+\|(?P<name>[^|]+)\|\s+replace::\s*(?P<value>.*\S)\s*$", re.M)
_RAW_SUB = re.compile(r"^\.\.\s+\|(?P<name>[^|]+)\|\s+(?:raw|image)::", re.M)
_BOUND = re.compile(r"^\s*\.\.\s+list-table::|^[=\-~^*#]{4,}\s*$")  # a table or a heading's line


@dataclass(frozen=True)
class Defs:
    """Definitions of the docs' roles and substitutions: ``:version-ref:`LIB RELEASE``` reads
    the historical compatibility matrix (library × ROCm release), ``|name|`` a
    ``.. |name| replace:: value`` definition, ``RELEASE`` a ``.. version-set::`` name."""

    libraries: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> release -> text
    releases: tuple[str, ...] = ()  # newest first, as the matrix's header lists them
    substitutions: dict[str, str] = field(default_factory=dict)
    version_sets: dict[str, str] = field(default_factory=dict)
    source: str = ""

    def with_page(self, text: str) -> Defs:
        """These definitions plus the page's own (its version-set names and replace:: lines)."""
        subs = dict(self.substitutions)
        subs.update({m["name"]: m["value"] for m in _REPLACE.finditer(text)})
        sets = dict(self.version_sets)
        sets.update({m.group(1): m.group(2) for m in _VERSION_SET.finditer(text)})
        return Defs(self.libraries, self.releases, subs, sets, self.source)

    def release(self, name: str) -> str | None:
        name = self.version_sets.get(name, name)
        if name.lower() == "latest":
            return self.releases[0] if self.releases else None
        return name if re.fullmatch(r"\d+(?:\.\d+)+", name) else None

    def resolve(self, role: str, text: str) -> str | None:
        """The value a role stands for, or None when these definitions do not say."""
        if role == "version":
            got = self.release(text.strip())
            return got if got and self.releases else None
        if role != "version-ref":
            return None
        parts = re.findall(r'"[^"]*"|\S+', text)
        if len(parts) != 2:
            return None
        lib, release = parts[0].strip('"'), self.release(parts[1])
        if release is None:
            return None
        if lib.lower() == "rocm":
            return release if release in self.releases else None
        row = next((v for k, v in self.libraries.items() if k.lower() == lib.lower()), None)
        return (row or {}).get(release) or None


@dataclass(frozen=True)
class Cell:
    """What a cell says: a version, a label (words), nothing, or an unread reason."""

    version: str | None = None
    label: str | None = None
    unread: str | None = None  # why the cell is not read as a version
    markup: str | None = None  # the unresolved role or substitution, as written

    @property
    def empty(self) -> bool:
        """The cell states nothing ("", "-", "N/A")."""
        return not (self.version or self.label or self.unread)


def icons(text: str) -> frozenset[str]:
    """The page's substitutions that are pictures (``.. |docker-icon| raw:: html``)."""
    return frozenset(m["name"] for m in _RAW_SUB.finditer(text))


def substitute(raw: str, defs: Defs, pictures: frozenset[str]) -> tuple[str, str | None]:
    """The cell with every role and substitution it holds replaced by its definition;
    (text, the first one that has none)."""
    missing: list[str] = []
    undefined: list[str] = []  # substitutions: decoration beside a version, a value alone

    def role(m: re.Match[str]) -> str:
        if m["role"] in LINK_ROLES:
            return m.group(0)
        got = defs.resolve(m["role"], m["text"])
        if got is None:
            missing.append(m.group(0))
            return m.group(0)
        return got

    def sub(m: re.Match[str]) -> str:
        name = m["name"]
        if name in pictures:
            return m.group(0)
        if name in defs.substitutions:
            return defs.substitutions[name]
        undefined.append(m.group(0))
        return ""

    text = ROLE.sub(role, raw)
    text = SUBSTITUTION.sub(sub, text)
    if undefined and not versions(ROLE.sub("", text)):
        missing.append(undefined[0])
    return text, (missing[0] if missing else None)


def versions(text: str) -> list[str]:
    """The distinct version tokens of cleaned cell text, in order."""
    return list(dict.fromkeys(m.group(1) or m.group(2) for m in VERSION.finditer(text)))


def read(text: str, *, markup: str | None = None) -> Cell:
    """A cleaned cell: its version, or a label, or why it is unread."""
    if markup is not None:
        return Cell(unread=f"unresolved: {markup}", markup=markup)
    words = text.strip()
    if words.lower() in ABSENT:
        return Cell()
    if words.lower() in UNPINNED:
        return Cell(version=words.lower())
    found = versions(words)
    if len(found) == 1:
        return Cell(version=found[0])
    if len(found) > 1:
        return Cell(label=words, unread="several versions: " + ", ".join(found))
    return Cell(label=words, unread="no version in the cell")


def tag_evidence(reference: str) -> tuple[str | None, str | None]:
    """(backend, version) that an image reference's repository and tag state."""
    repo, _, tag = reference.rpartition(":")
    m = _TAG_ROCM.search(tag)
    if m:
        return "rocm", m.group(1)
    if "rocm" in repo.lower().split("/")[0] or "rocm" in tag.lower():
        return "rocm", None
    m = _TAG_CUDA.search(tag)
    if m:
        return "cuda", m.group(1)
    if re.search(r"(?<![a-z])cpu(?![a-z])", tag.lower()):
        return "cpu", None
    return None, None


def page_evidence(text: str, line: int) -> tuple[str | None, str | None]:
    """(backend, version) that the page states for the table whose directive is at ``line``:
    the last "ROCm X.Y" of the prose between the previous table (or heading) and it."""
    lines = text.splitlines()[: max(line - 1, 0)]
    bounds = (i + 1 for i in range(len(lines) - 1, -1, -1) if _BOUND.match(lines[i]))
    prose = "\n".join(lines[next(bounds, 0) :])
    found = _PAGE_ROCM.findall(prose)
    if found:
        return "rocm", found[-1]
    if re.search(r"\bROCm\b", prose):
        return "rocm", None
    return None, None
