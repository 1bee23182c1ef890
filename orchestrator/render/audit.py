"""Inventory audit findings and diffs → Markdown and JSON; an inventory → a CycloneDX 1.5 SBOM.

Renderers return strings (or the BOM's dict); the CLI writes them.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..components import Component, Inventory

if TYPE_CHECKING:
    from ..audit import Change, Finding

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

# ---------------------------------------------------------- CycloneDX ---
# Package listings become components with a package URL (pkg:pypi, pkg:deb);
# a headline component that is its package's value (pytorch = pip:torch) is
# folded into it as a property; ones read from files, headers or tools (ROCm
# release, hipBLASLt header, ucx_info -v) are components of their own; what
# PyTorch was built with becomes properties of the torch package.
# https://cyclonedx.org/docs/1.5/json/ ; https://github.com/package-url/purl-spec

SPEC_VERSION = "1.5"

def _props(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in pairs if v]

def purl(comp: Component, distro: str = "debian") -> str | None:
    # package-url: everything but ASCII alphanumerics and ".-_~" is percent-encoded,
    # "+" included (2.13.0+cpu → 2.13.0%2Bcpu, libstdc++6 → libstdc%2B%2B6).
    version = quote(comp.value, safe=".~-_")
    if comp.name.startswith("pip:"):
        return "pkg:pypi/%s@%s" % (quote(comp.name[4:], safe="-._"), version)
    if comp.name.startswith("deb:"):
        url = "pkg:deb/%s/%s@%s" % (distro, quote(comp.name[4:], safe="-._~"), version)
        arch = comp.extra.get("arch")
        return url + ("?arch=%s" % quote(arch, safe="")) if arch else url
    return None

def _folded(comp: Component, comps: dict[str, Component]) -> bool:
    """A headline component whose value is its package's (pytorch = pip:torch)."""
    return comp.headline and comp.source in ("pip", "dpkg") and comp.extra.get("package") in comps

def _image_parts(image_ref: str) -> tuple[str, str]:
    if "@" in image_ref:
        name, _, ver = image_ref.partition("@")
        return name, ver
    slash = image_ref.rfind("/")
    colon = image_ref.rfind(":")
    if colon > slash:
        return image_ref[:colon], image_ref[colon + 1:]
    return image_ref, "latest"

def to_cyclonedx(inventory: Inventory, image_ref: str, *, serial: str | None = None,
                 timestamp: str | None = None) -> dict[str, Any]:
    """A CycloneDX 1.5 BOM of the image. The serial number is derived from the
    content (same inventory, same BOM) unless given."""
    comps = inventory.as_dict()
    os_comp = comps.get("os")
    distro = os_comp.value.split()[0] if os_comp and os_comp.value.split()[0] in ("debian", "ubuntu") \
        else "debian"
    folded: dict[str, list[tuple[str, str]]] = {}
    built_with: list[tuple[str, str]] = []
    torch = comps.get("pytorch")
    torch_pkg = torch.extra.get("package", "pip:torch") if torch else "pip:torch"
    out: list[dict[str, Any]] = []
    for comp in inventory.components:
        if comp.name.startswith("pytorch."):
            built_with.append(("valorch:%s" % comp.name, comp.value))
        elif _folded(comp, comps):
            folded.setdefault(comp.extra["package"], []).append(("valorch:component", comp.name))
    for comp in inventory.components:
        if comp.name.startswith("pytorch.") or comp.name in ("debian", "ubuntu") \
                or _folded(comp, comps):
            continue
        entry: dict[str, Any] = {"bom-ref": "valorch:" + comp.name, "name": comp.name,
                                 "version": comp.value, "type": "library"}
        url = purl(comp, distro)
        if url:
            entry["name"] = comp.name.split(":", 1)[1]
            entry["purl"] = entry["bom-ref"] = url
        elif comp.name == "os":
            os_id = comp.value.split()[0]
            precise = comps.get(os_id)  # /etc/debian_version says 12.7 where os-release says 12
            entry.update(type="operating-system", name=os_id,
                         version=precise.value if precise else " ".join(comp.value.split()[1:]))
        elif comp.source == "command" or comp.name == "python":
            entry["type"] = "application"
        props = [("valorch:source", comp.source), ("valorch:evidence", comp.evidence)]
        props += folded.get(comp.name, [])
        if comp.name == torch_pkg:
            props += built_with
        props += [("valorch:extra:%s" % k, v) for k, v in sorted(comp.extra.items())]
        entry["properties"] = _props(props)
        out.append(entry)
    name, version = _image_parts(image_ref)
    metadata: dict[str, Any] = {
        "tools": {"components": [{"type": "application", "name": "valorch"}]},
        "component": {"type": "container", "bom-ref": image_ref, "name": name, "version": version},
        "properties": _props([("valorch:host:%s" % k, v) for k, v in sorted(inventory.host_facts.items())]),
    }
    if timestamp:
        metadata["timestamp"] = timestamp
    if serial is None:
        digest = hashlib.sha256(json.dumps([image_ref, inventory.model_dump()], sort_keys=True)
                                .encode()).hexdigest()
        serial = "urn:uuid:%s" % uuid.uuid5(uuid.NAMESPACE_URL, "valorch:" + digest)
    return {"bomFormat": "CycloneDX", "specVersion": SPEC_VERSION, "serialNumber": serial,
            "version": 1, "metadata": metadata, "components": out}
