"""Inventory audit: validate a gathered inventory, compare it with the catalog,
diff two images. Pure functions, no I/O; renderers return strings (the CycloneDX
SBOM is ``orchestrator/sbom.py``). The gatherer is ``orchestrator/probe/inventory.py`` (it runs
inside the image).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from orchestrator.probe.inventory_parse import build_findings as _probe_build_findings

MAX_NAME = 200
MAX_VALUE = 500
MAX_EVIDENCE = 1_000
MAX_EXTRA = 50
MAX_COMPONENTS = 20_000
MAX_ERRORS = 200

Source = Literal["file", "dpkg", "pip", "header", "api", "command"]

# catalog component key (the seed table's columns) -> inventory component name
CATALOG_KEYS: dict[str, str] = {
    "pytorch": "pytorch", "ubuntu": "ubuntu", "debian": "debian", "python": "python",
    "apex": "apex", "torchvision": "torchvision", "torchaudio": "torchaudio",
    "tensorboard": "tensorboard", "tensorflow": "tensorflow", "magma": "magma", "ucx": "ucx",
    "ompi": "ompi", "ofed": "ofed", "rocm": "rocm", "cuda": "cuda", "cudnn": "cudnn",
    "nccl": "nccl", "numpy": "numpy", "triton": "triton", "os": "os",
}
UNPINNED = frozenset({"master", "main", "latest", "any", "*"})

class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

class Component(_Frozen):
    """One thing an image holds, with where the value came from."""

    name: str = Field(min_length=1, max_length=MAX_NAME)
    value: str = Field(max_length=MAX_VALUE)
    source: Source
    evidence: str = Field(default="", max_length=MAX_EVIDENCE)
    extra: dict[str, str] = Field(default_factory=dict, max_length=MAX_EXTRA)

    @field_validator("extra")
    @classmethod
    def _bounded_extra(cls, value: dict[str, str]) -> dict[str, str]:
        for k, v in value.items():
            if len(k) > MAX_NAME or len(v) > MAX_EVIDENCE:
                raise ValueError("extra entry %r is too long" % k[:40])
        return value

    @property
    def headline(self) -> bool:
        """Not a package listing (pip:..., deb:...)."""
        return ":" not in self.name

class Inventory(_Frozen):
    components: tuple[Component, ...] = Field(default=(), max_length=MAX_COMPONENTS)
    host_facts: dict[str, str] = Field(default_factory=dict, max_length=MAX_EXTRA)
    errors: tuple[str, ...] = Field(default=(), max_length=MAX_ERRORS)

    @field_validator("components")
    @classmethod
    def _unique(cls, value: tuple[Component, ...]) -> tuple[Component, ...]:
        seen: set[str] = set()
        for comp in value:
            if comp.name in seen:
                raise ValueError("component %r appears twice" % comp.name)
            seen.add(comp.name)
        return value

    @field_validator("errors", mode="before")
    @classmethod
    def _error_text(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return tuple(str(e)[:MAX_EVIDENCE] for e in value)
        return value

    def get(self, name: str) -> Component | None:
        return next((c for c in self.components if c.name == name), None)

    def as_dict(self) -> dict[str, Component]:
        return {c.name: c for c in self.components}

class Finding(_Frozen):
    """One result of comparing an image with what the catalog expects."""

    kind: Literal["ok", "drift", "missing", "unpinned", "build-mismatch"]
    component: str
    expected: str | None = None
    found: str | None = None
    evidence: str = ""
    message: str = ""

    @property
    def drift(self) -> bool:
        return self.kind in ("drift", "missing")

class Change(_Frozen):
    kind: Literal["added", "removed", "changed"]
    name: str
    old: str | None = None
    new: str | None = None

def parse_inventory(obj: Any) -> Inventory:
    """Validate the probe's untrusted JSON (the dict after the marker).

    Raises pydantic.ValidationError (a ValueError) for anything malformed.
    """
    if not isinstance(obj, dict):
        raise ValueError("inventory must be a JSON object, not %s" % type(obj).__name__)
    if obj.get("type", "inventory") != "inventory":
        raise ValueError("not an inventory record: type=%r" % obj.get("type"))
    body = {k: v for k, v in obj.items() if k != "type"}
    return Inventory.model_validate(body)

# ---------------------------------------------------------------- compare ---

def _tokens(version: str) -> list[int | str]:
    text = version.strip().lower()
    text = text[1:] if re.match(r"^v\d", text) else text
    return [int(t) if t.isdigit() else t for t in re.findall(r"\d+|[a-z]+", text)]

def version_matches(expected: str, found: str) -> bool:
    """Prefix semantics on version tokens: '3.12' accepts '3.12.8', '2.4.0' accepts
    '2.4.0+rocm6.3', '5.3-1.0.5.0' refuses '5.3-2.0.0.0', '3.1' refuses '3.12'."""
    want, got = _tokens(expected), _tokens(found)
    if not want:
        return expected.strip() == found.strip()
    return got[: len(want)] == want

def resolve(inventory: Inventory, key: str) -> Component | None:
    """The inventory component that stands for a catalog key."""
    key = key.strip().lower()
    for name in (CATALOG_KEYS.get(key, key), "pip:" + re.sub(r"[-_.]+", "-", key), "deb:" + key):
        comp = inventory.get(name)
        if comp is not None:
            return comp
    return None

def compare(inventory: Inventory, expected: dict[str, str], *, build: bool = True) -> list[Finding]:
    """Each expected component against what the image holds, in the catalog's order.

    ``master`` (and ``main``, ``latest``, ``*``) is unpinned: what is there is
    reported as ``unpinned``, not drift; a component that is absent is
    ``missing`` either way. With ``build``, PyTorch's compiled-against versions
    that disagree with the installed libraries are added as ``build-mismatch``
    (a warning: CUDA wheels bundle their own runtime, so this does not gate).
    """
    findings: list[Finding] = []
    for key, want in expected.items():
        want = str(want).strip()
        comp = resolve(inventory, key)
        if comp is None:
            findings.append(Finding(kind="missing", component=key, expected=want,
                                    message="%s: expected %s, not found in the image" % (key, want)))
        elif want.lower() in UNPINNED or not want:
            findings.append(Finding(kind="unpinned", component=key, expected=want, found=comp.value,
                                    evidence=comp.evidence,
                                    message="%s: unpinned (%s), image has %s" % (key, want or "-", comp.value)))
        elif version_matches(want, comp.value):
            findings.append(Finding(kind="ok", component=key, expected=want, found=comp.value,
                                    evidence=comp.evidence, message="%s %s" % (key, comp.value)))
        else:
            findings.append(Finding(kind="drift", component=key, expected=want, found=comp.value,
                                    evidence=comp.evidence,
                                    message="%s: expected %s, image has %s" % (key, want, comp.value)))
    if build:
        findings.extend(build_findings(inventory))
    return findings

def build_findings(inventory: Inventory) -> list[Finding]:
    raw = _probe_build_findings([c.model_dump() for c in inventory.components])
    return [Finding(kind="build-mismatch", component=f["component"], expected=f["built"],
                    found=f["installed"], message=f["message"]) for f in raw]

def has_drift(findings: list[Finding]) -> bool:
    return any(f.drift for f in findings)

def exit_code(findings: list[Finding], inventory: Inventory | None = None) -> int:
    """The design's audit exit status: 0 clean, 1 drift, 2 the gatherer reported errors."""
    if has_drift(findings):
        return 1
    return 2 if inventory is not None and inventory.errors else 0

# ------------------------------------------------------------------- diff ---

def diff(a: Inventory, b: Inventory, *, packages: bool = True) -> list[Change]:
    """Component by component: headline components first, then pip:, then deb:."""
    old, new = a.as_dict(), b.as_dict()
    changes: list[Change] = []
    for name in sorted(old.keys() | new.keys(), key=_order):
        if not packages and ":" in name:
            continue
        if name not in new:
            changes.append(Change(kind="removed", name=name, old=old[name].value))
        elif name not in old:
            changes.append(Change(kind="added", name=name, new=new[name].value))
        elif old[name].value != new[name].value:
            changes.append(Change(kind="changed", name=name, old=old[name].value, new=new[name].value))
    return changes

def _order(name: str) -> tuple[int, str]:
    return (0 if ":" not in name else 1 if name.startswith("pip:") else 2, name)

# ---------------------------------------------------------------- render ---

def _cell(text: str | None) -> str:
    return "" if text is None else str(text).replace("|", "\\|").replace("\n", " ")

_MARK = {"ok": "ok", "drift": "**DRIFT**", "missing": "**MISSING**", "unpinned": "unpinned",
         "build-mismatch": "build mismatch"}

def render_findings_md(findings: list[Finding], image: str = "", inventory: Inventory | None = None) -> str:
    drift = sum(f.drift for f in findings)
    lines = ["# Inventory audit%s" % (": `%s`" % image if image else ""), "",
             "%d component(s) checked, %d drift." % (len(findings), drift), "",
             "| component | expected | found | status | evidence |",
             "| --- | --- | --- | --- | --- |"]
    for f in findings:
        lines.append("| %s | %s | %s | %s | %s |" % (
            _cell(f.component), _cell(f.expected), _cell(f.found or "-"), _MARK[f.kind],
            "`%s`" % _cell(f.evidence) if f.evidence else ""))
    notes = [f.message for f in findings if f.kind == "build-mismatch"]
    if notes:
        lines += ["", "## Compiled against vs installed", ""] + ["- " + _cell(m) for m in notes]
    if inventory is not None and inventory.errors:
        lines += ["", "## Gatherer errors", ""] + ["- " + _cell(e) for e in inventory.errors]
    return "\n".join(lines) + "\n"

def render_diff_md(changes: list[Change], a: str = "A", b: str = "B") -> str:
    head = [c for c in changes if ":" not in c.name]
    pkgs = [c for c in changes if ":" in c.name]
    lines = ["# Inventory diff: `%s` → `%s`" % (a, b), ""]
    if not changes:
        return "\n".join(lines + ["No differences.", ""])
    lines += ["| component | %s | %s | change |" % (_cell(a), _cell(b)), "| --- | --- | --- | --- |"]
    for c in head:
        lines.append("| %s | %s | %s | %s |" % (_cell(c.name), _cell(c.old or "-"), _cell(c.new or "-"), c.kind))
    if not head:
        lines.append("| (no headline component changed) | | | |")
    if pkgs:
        counts = {k: sum(c.kind == k for c in pkgs) for k in ("added", "removed", "changed")}
        lines += ["", "## Packages (%d added, %d removed, %d changed)" % (
            counts["added"], counts["removed"], counts["changed"]), "",
            "| package | %s | %s | change |" % (_cell(a), _cell(b)), "| --- | --- | --- | --- |"]
        lines += ["| %s | %s | %s | %s |" % (_cell(c.name), _cell(c.old or "-"), _cell(c.new or "-"), c.kind)
                  for c in pkgs]
    return "\n".join(lines) + "\n"

def render_diff_json(changes: list[Change], a: str = "A", b: str = "B") -> str:
    return json.dumps({"a": a, "b": b, "changes": [c.model_dump() for c in changes]},
                      indent=1, sort_keys=True) + "\n"

