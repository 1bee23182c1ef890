"""Inventory audit: validate a gathered inventory, compare it with the catalog,
diff two images. Pure functions, no I/O. The renderers (Markdown, JSON, a CycloneDX
SBOM) are in ``render/audit.py``; the nouns (Component, Inventory) in ``components.py``.
The gatherer is ``valorch_probe/inventory.py`` (it runs inside the image).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from . import encode
from .components import (
    UNPINNED,
    Component,
    Inventory,
    debian_upstream,
    release,
    same_release,
    version_matches,
)
from .spec import Change, Frozen


class Finding(Frozen):
    """One result of comparing an image with what the catalog expects."""

    kind: Literal["ok", "drift", "missing", "unpinned", "build-mismatch", "broken", "differs"]
    component: str
    expected: str | None = None
    found: str | None = None
    evidence: str = ""
    message: str = ""

    @property
    def drift(self) -> bool:
        """The audit is not clean (``broken``: installed, does not import; ``differs``: not the
        version its package manager installed)."""
        return self.kind in ("drift", "missing", "broken", "differs")


def parse_inventory(obj: Any) -> Inventory:
    """The probe's untrusted JSON (the dict after the marker), validated: a ValueError
    (pydantic's ValidationError is one) for anything malformed."""
    if not isinstance(obj, dict):
        raise ValueError("inventory must be a JSON object, not %s" % type(obj).__name__)
    if obj.get("type", "inventory") != "inventory":
        raise ValueError("not an inventory record: type=%r" % obj.get("type"))
    body = {k: encode.well_formed(v) for k, v in obj.items() if k != "type"}
    return Inventory.model_validate(body)


def resolve(inventory: Inventory, key: str) -> Component | None:
    """The inventory component that stands for a catalog key."""
    key = key.strip().lower()
    for name in (key, "pip:" + re.sub(r"[-_.]+", "-", key), "deb:" + key):
        comp = inventory.get(name)
        if comp is not None:
            return comp
    return None


def compare(inventory: Inventory, expected: dict[str, str], *, build: bool = True) -> list[Finding]:
    """Each expected component against what the image holds, in the catalog's order.
    ``master`` (and ``main``, ``latest``, ``*``) is unpinned: what is there is ``unpinned``,
    not drift; an absent component is ``missing`` either way. With ``build``, PyTorch's
    compiled-against versions that disagree with the installed libraries are added as
    ``build-mismatch`` (a warning: CUDA wheels bundle their own runtime, so it does not gate)."""
    findings: list[Finding] = []
    for key, want in expected.items():
        want = str(want).strip()
        comp = resolve(inventory, key)
        if comp is None:
            message = "%s: expected %s, not found in the image" % (key, want)
            findings.append(Finding(kind="missing", component=key, expected=want, message=message))
            continue
        kind: Literal["unpinned", "ok", "drift"]
        if want.lower() in UNPINNED or not want:
            kind = "unpinned"
            message = "%s: unpinned (%s), image has %s" % (key, want or "-", comp.value)
        elif version_matches(want, comp.value):
            kind, message = "ok", "%s %s" % (key, comp.value)
        else:
            kind, message = "drift", "%s: expected %s, image has %s" % (key, want, comp.value)
        findings.append(
            Finding(
                kind=kind,
                component=key,
                expected=want,
                found=comp.value,
                evidence=comp.evidence,
                message=message,
            )
        )
    findings.extend(import_findings(inventory))
    findings.extend(version_findings(inventory))
    if build:
        findings.extend(build_findings(inventory))
    return findings


def import_findings(inventory: Inventory) -> list[Finding]:
    """Every framework package the gatherer found installed but failing to import
    (probe/imports.py), whether the catalog pins it or not: the audit is not clean."""
    return [
        Finding(
            kind="broken",
            component=c.name,
            found=c.value,
            evidence=c.extra["import_error"],
            message="%s %s: installed but does not import: %s"
            % (c.name, c.value, c.extra["import_error"]),
        )
        for c in inventory.components
        if c.headline and c.extra.get("import_error")
    ]


def version_findings(inventory: Inventory) -> list[Finding]:
    """Each Python module whose version is not the release its package manager installed (a
    distribution that patched the source and its version, a pre-release build, another copy
    shadowing the package): what the module reports (its metadata, and ``pytorch.runtime``,
    torch.__version__) beside what dpkg installed from the Debian source package of the same
    name, compared as releases (``same_release``: '+dfsg', '+gitunknown' are not releases)."""
    by_name = inventory.as_dict()
    # the Python module's own package first ("python3-torch" before "libtorch1.13")
    all_debs = sorted(
        (c for c in inventory.components if c.name.startswith("deb:")),
        key=lambda c: (not c.name.startswith("deb:python3-"), c.name),
    )
    findings = []
    for comp in inventory.components:
        if not comp.headline or comp.name.startswith("pytorch.") or comp.source != "pip":
            continue  # a Python module's own metadata; a tool or header is another copy
        debs = [c for c in all_debs if c.extra.get("source", c.name[4:]) == comp.name]
        runtime = by_name.get(comp.name + ".runtime")
        reported = [comp.value] + ([runtime.value] if runtime else [])
        for deb in debs[:1]:
            upstream, _ = debian_upstream(deb.value)
            if all(same_release(v, upstream) for v in reported):
                continue
            said = "%s (%s · %s)" % (comp.value, comp.source, comp.evidence)
            if runtime and runtime.value != comp.value:
                said += ", %s %s" % (runtime.evidence, runtime.value)
            findings.append(
                Finding(
                    kind="differs",
                    component=comp.name,
                    expected="%s (dpkg %s)" % (deb.value, deb.name[4:]),
                    found=comp.value,
                    evidence=deb.evidence,
                    message="%s: the module reports %s, but dpkg installed %s %s: the versions "
                    "differ" % (comp.name, said, deb.name[4:], deb.value),
                )
            )
    return findings


def build_findings(inventory: Inventory) -> list[Finding]:
    """PyTorch's compiled-against library versions (``pytorch.built_with.LIB``) that differ from the
    installed ones, compared on the precision both sides give ('8.9' vs '8.9.2' agrees)."""
    by_name = {c.name: c for c in inventory.components}
    findings = []
    for comp in inventory.components:
        if not comp.name.startswith("pytorch.built_with."):
            continue
        lib = comp.name.split(".", 2)[2]
        installed = by_name.get(lib)
        if installed is None:
            continue
        built, have = release(comp.value)[0], release(installed.value)[0]
        n = min(len(built), len(have))
        if n and built[:n] != have[:n]:
            findings.append(
                Finding(
                    kind="build-mismatch",
                    component=lib,
                    expected=comp.value,
                    found=installed.value,
                    message="PyTorch was built against %s %s but %s is installed (%s)"
                    % (lib, comp.value, installed.value, installed.evidence),
                )
            )
    return findings


def has_drift(findings: list[Finding]) -> bool:
    return any(f.drift for f in findings)


def exit_code(findings: list[Finding], inventory: Inventory | None = None) -> int:
    """The design's audit exit status: 0 clean, 1 drift, 2 the gatherer reported errors."""
    if has_drift(findings):
        return 1
    return 2 if inventory is not None and inventory.errors else 0


def diff(a: Inventory, b: Inventory, *, packages: bool = True) -> list[Change]:
    """Component by component: headline components first, then pip:, then deb:."""
    old, new = a.as_dict(), b.as_dict()
    changes: list[Change] = []
    for name in sorted(old.keys() | new.keys(), key=_order):
        if not packages and ":" in name:
            continue
        if name not in new:
            changes.append(Change("removed", name, old=old[name].value))
        elif name not in old:
            changes.append(Change("added", name, new=new[name].value))
        elif old[name].value != new[name].value:
            changes.append(Change("changed", name, old[name].value, new[name].value))
    return changes


def _order(name: str) -> tuple[int, str]:
    return (0 if ":" not in name else 1 if name.startswith("pip:") else 2, name)
