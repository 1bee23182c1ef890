"""Where a docs page states its image tags, and what a tag says against its columns.

ROCm 7.x moved the Docker image tags out of the framework compatibility pages: those pages
now send readers to the install guide (``:ref:`… <rocm-install-on-linux:pytorch-docker-support>```,
ROCm/rocm-install-on-linux ``docs/install/3rd-party/pytorch-install.rst``), whose "Docker
image support" section gives each image as a ``docker pull rocm/pytorch:TAG`` code block,
then a list-table of its other components (no image column), then "See ``TAG`` on `Docker Hub
<…/images/sha256-…>`__". ``with_pulled_images`` gives such a table its image column, from
the pull line before it and the Docker Hub link after it; ``moved_to`` names where a page
without a components table sends its readers. The checks of one imported image's cells
(Debian revisions trimmed one way, a tag that contradicts its columns) are ``cell_notes``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..components import debian_upstream
from .core import parse_tag
from .rst_table import ListTable, header_key

_PULL = re.compile(r"^\s*docker pull\s+(?P<ref>[\w./-]{1,200}:[\w.-]{1,128})\s*$", re.M)
_HUB = re.compile(
    r"<(?P<url>https://hub\.docker\.com/layers/[^<>\s]{1,400}/images/sha256-\w{1,80})>"
)
_INSTALL_REF = re.compile(r"<rocm-install-on-linux:(?P<label>[\w-]{1,80})>")
# a Debian package version in a cell: an upstream part, then "-" and a Debian revision, a
# number with a distribution's marker after it ("1.16.0+ds-5ubuntu1", "4.1.6-7ubuntu2",
# "1.24.2-1+deb12u1", "1.12.1~rc2-1"), never a dotted release ("5.3-1.0.5.0" is OFED's);
# the repack suffixes of the upstream part ("+ds", "+dfsg", "+repack") name no release
_DEB_CELL = re.compile(r"^\d[\w.+~]*-\d+(?:(?:ubuntu|build|\+deb)[\w.+~]*)?$")
_REPACK = re.compile(r"\+(?:ds|dfsg|repack)\d*$")
_TAG_FIELDS = ("ubuntu", "debian", "python", "pytorch", "rocm")


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def with_pulled_images(text: str, tables: list[ListTable]) -> list[ListTable]:
    """Each table without an image column that a ``docker pull`` line precedes (after the
    table before it) gets that image as its first column, linked to the Docker Hub layer
    page the text gives for the same tag before the next table."""
    pulls = [(_line_of(text, m.start()), m.group("ref")) for m in _PULL.finditer(text)]
    hubs = [(_line_of(text, m.start()), m.group("url")) for m in _HUB.finditer(text)]
    out, previous = [], 0
    for n, table in enumerate(tables):
        following = tables[n + 1].line if n + 1 < len(tables) else 1 << 30
        before = [p for p in pulls if previous < p[0] < table.line]
        previous = table.line
        if not table.rows or None in [header_key(c) for c in table.rows[0]] or not before:
            out.append(table)
            continue
        line, ref = before[-1]
        tag = ref.rsplit(":", 1)[1]
        url = next((u for at, u in hubs if table.line < at < following and f"/{tag}/" in u), None)
        cell = f"`{ref} <{url}>`__" if url else ref
        rows = [("Docker", *table.rows[0])] + [(cell, *r) for r in table.rows[1:]]
        lines = tuple((line, *cl) for cl in table.cell_lines) if table.cell_lines else ()
        out.append(replace(table, rows=tuple(rows), cell_lines=lines))
    return out


def moved_to(text: str) -> str | None:
    """Where a page without a components table says its image tags are, or None."""
    m = _INSTALL_REF.search(text)
    if m is None:
        return None
    label = m.group("label")
    page = label[: -len("-docker-support")] if label.endswith("-docker-support") else ""
    where = f"docs/install/3rd-party/{page}-install.rst" if page else "docs/install/"
    return (
        f"this page lists no image tags: it refers readers to the section '{label}' of "
        "ROCm's Linux install guide (rocm-install-on-linux), where ROCm 7.x publishes them "
        f"(ROCm/rocm-install-on-linux {where}, 'Docker image support'): import that page instead"
    )


def trimmed(value: str, version: str) -> tuple[str, str | None]:
    """The version a component cell states, one way for every Debian package version: its
    upstream part without the repack suffix ('1.16.0+ds-5ubuntu1' and '4.1.6-7ubuntu2' give
    '1.16.0' and '4.1.6'); with what was dropped, for the report (None: nothing)."""
    if not _DEB_CELL.match(value.strip()):
        return version, None
    upstream = _REPACK.sub("", debian_upstream(value.strip())[0])
    return upstream, f"Debian package version {value.strip()}: kept its upstream {upstream}"


def contradictions(reference: str, comps: dict[str, str]) -> list[tuple[str, str]]:
    """(column, why) for each component the tag states that its column contradicts (a tag
    version neither a prefix of the column's nor the column's a prefix of it)."""
    spec = parse_tag(reference)
    if spec is None:
        return []
    out = []
    for key in _TAG_FIELDS:
        said, column = spec.components.get(key), comps.get(key)
        if said and column and not (column.startswith(said) or said.startswith(column)):
            out.append(
                (
                    key,
                    f"the tag says {key} {said}, the column says {column}: imported as the "
                    "column says; check the page",
                )
            )
    return out
