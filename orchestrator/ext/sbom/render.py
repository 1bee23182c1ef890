"""CycloneDX 1.5 SBOMs of an image's inventory, built with cyclonedx-python-lib (pure: a
string out). The subject is the image (by digest when known), valorch is the tool, the
timestamp is when the inventory was gathered; package listings become components with
package URLs (``pkg:pypi``, ``pkg:deb`` with the distro qualifier, ``debian-12``), and
licences where the image records them (dpkg copyright files, dist-info metadata).
https://cyclonedx.org/docs/1.5/json/ ; https://github.com/package-url/purl-spec"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime
from typing import Any

from cyclonedx.contrib.license.factories import LicenseFactory
from cyclonedx.model import Property
from cyclonedx.model.bom import Bom
from cyclonedx.model.component import Component as Cdx
from cyclonedx.model.component import ComponentType
from cyclonedx.model.license import LicenseExpression
from cyclonedx.output.json import JsonV1Dot5
from packageurl import PackageURL

from orchestrator import __version__
from orchestrator.components import Component, Inventory


def distro_of(inventory: Inventory) -> tuple[str, str | None]:
    """(``debian``|``ubuntu``, ``debian-12``) from the os component; Debian when unknown."""
    os_comp = inventory.get("os")
    words = os_comp.value.split() if os_comp else []
    if words and words[0] in ("debian", "ubuntu"):
        return words[0], f"{words[0]}-{words[1]}" if len(words) > 1 else None
    return "debian", None


def package_url(comp: Component, distro: str, distro_version: str | None) -> PackageURL | None:
    if comp.name.startswith("pip:"):
        return PackageURL(type="pypi", name=comp.name[4:], version=comp.value)
    if comp.name.startswith("deb:"):
        qualifiers = {
            k: v for k, v in (("arch", comp.extra.get("arch")), ("distro", distro_version)) if v
        }
        return PackageURL(
            type="deb",
            namespace=distro,
            name=comp.name[4:],
            version=comp.value,
            qualifiers=qualifiers or None,
        )
    return None


def _folded(comp: Component, comps: dict[str, Component]) -> bool:
    """A headline component whose value is its package's (pytorch = pip:torch)."""
    return comp.headline and comp.source in ("pip", "dpkg") and comp.extra.get("package") in comps


def _image_parts(image_ref: str) -> tuple[str, str]:
    if "@" in image_ref:
        name, _, ver = image_ref.partition("@")
        return name.rsplit(":", 1)[0] if name.rfind(":") > name.rfind("/") else name, ver
    slash, colon = image_ref.rfind("/"), image_ref.rfind(":")
    if colon > slash:
        return image_ref[:colon], image_ref[colon + 1 :]
    return image_ref, "latest"


def _licenses(text: str | None) -> list:
    if not text:
        return []
    factory = LicenseFactory()
    names = (
        [text]
        if " AND " in text or " OR " in text
        else [t.strip() for t in text.split(",") if t.strip()]
    )
    made = [factory.make_from_string(n) for n in names]
    if len(made) > 1:  # an expression must stand alone (a dpkg list may hold "GPL-2 or Artistic")
        made = [
            factory.make_with_name(n) if isinstance(m, LicenseExpression) else m
            for n, m in zip(names, made, strict=True)
        ]
    return made


def _props(pairs: list[tuple[str, str]]) -> list:
    return [Property(name=k, value=v) for k, v in pairs if v]


def _annotations(
    inventory: Inventory, comps: dict[str, Component]
) -> tuple[dict[str, list[tuple[str, str]]], list[tuple[str, str]]]:
    """What other components add to a package's properties: the components folded into it
    (by package name), and PyTorch's build settings (``pytorch.*``, for the torch package)."""
    folded: dict[str, list[tuple[str, str]]] = {}
    built_with: list[tuple[str, str]] = []
    for comp in inventory.components:
        if comp.name.startswith("pytorch."):
            built_with.append((f"valorch:{comp.name}", comp.value))
        elif _folded(comp, comps):
            folded.setdefault(comp.extra["package"], []).append(("valorch:component", comp.name))
    return folded, built_with


def _component(
    comp: Component,
    comps: dict[str, Component],
    distro: str,
    distro_version: str | None,
    extra_props: list[tuple[str, str]],
) -> Any:
    """One inventory component as a CycloneDX component: a package with its URL, the
    operating system, an application, or a library."""
    kind, name, version = ComponentType.LIBRARY, comp.name, comp.value
    url = package_url(comp, distro, distro_version)
    if url is not None:
        name = comp.name.split(":", 1)[1]
    elif comp.name == "os":
        os_id = comp.value.split()[0]
        precise = comps.get(os_id)  # /etc/debian_version says 12.7 where os-release says 12
        kind, name = ComponentType.OPERATING_SYSTEM, os_id
        version = precise.value if precise else " ".join(comp.value.split()[1:])
    elif comp.source == "command" or comp.name == "python":
        kind = ComponentType.APPLICATION
    pairs = [("valorch:source", comp.source), ("valorch:evidence", comp.evidence), *extra_props]
    pairs += [(f"valorch:extra:{k}", v) for k, v in sorted(comp.extra.items()) if k != "license"]
    return Cdx(
        type=kind,
        name=name,
        version=version,
        purl=url,
        bom_ref=url.to_string() if url else f"valorch:{comp.name}",
        licenses=_licenses(comp.extra.get("license")),
        properties=_props(pairs),
    )


def _components(inventory: Inventory) -> list:
    """The BOM's components: every inventory component but PyTorch's build settings, the
    distro release (the ``os`` component names it) and those folded into their package."""
    comps = inventory.as_dict()
    distro, distro_version = distro_of(inventory)
    folded, built_with = _annotations(inventory, comps)
    torch = comps.get("pytorch")
    torch_pkg = torch.extra.get("package", "pip:torch") if torch else "pip:torch"
    out = []
    for comp in inventory.components:
        if comp.name.startswith("pytorch.") or comp.name in ("debian", "ubuntu"):
            continue
        if not _folded(comp, comps):
            extra = folded.get(comp.name, []) + (built_with if comp.name == torch_pkg else [])
            out.append(_component(comp, comps, distro, distro_version, extra))
    return out


def _subject(image_ref: str, digest: str | None) -> Any:
    """The image the BOM describes: by digest when known, its reference then a property."""
    name, version = _image_parts(image_ref)
    return Cdx(
        type=ComponentType.CONTAINER,
        name=name,
        version=digest or version,
        bom_ref=f"{name}@{digest}" if digest else image_ref,
        properties=_props([("valorch:reference", image_ref)] if digest else []),
    )


def bom_json(
    inventory: Inventory,
    image_ref: str,
    *,
    digest: str | None = None,
    timestamp: datetime | None = None,
) -> str:
    """The BOM as CycloneDX 1.5 JSON text. The serial number is derived from the content: same
    inventory and image, same BOM."""
    components = _components(inventory)
    subject = _subject(image_ref, digest)
    blob = json.dumps([image_ref, digest, inventory.model_dump()], sort_keys=True).encode()
    serial = uuid.uuid5(uuid.NAMESPACE_URL, "valorch:" + hashlib.sha256(blob).hexdigest())
    bom = Bom(serial_number=serial, components=components)
    bom.metadata.component = subject
    bom.register_dependency(subject, components)  # the image holds every component directly
    if timestamp is not None:
        bom.metadata.timestamp = timestamp
    bom.metadata.tools.components.add(
        Cdx(type=ComponentType.APPLICATION, name="valorch", version=__version__)
    )
    bom.metadata.properties = _props(
        [(f"valorch:host:{k}", v) for k, v in sorted(inventory.host_facts.items())]
    )
    return JsonV1Dot5(bom).output_as_string(indent=1)
