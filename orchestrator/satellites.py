"""The satellites: features users value that the core does not need to work, each in
``orchestrator/ext/<name>/`` with its own third-party packages as an extra (``pip install
'valorch[site]'``; docs/architecture.md, "Core and satellites"). The core reaches one only
through this registry, by name, when a user asks for it: the CLI registers their
``commands``, the executors' registry names the Kubernetes executor by module path, and a
core option that needs one (``diff --notify``, ``--format cyclonedx``) calls ``load``.
Import contracts keep the rest of the core off ``orchestrator.ext``, and the satellites
apart. Without its extra, a satellite's commands still show in ``valorch --help``; calling
one, or an option that needs one, is exit 2 with the install command.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from .errors import InputError


@dataclass(frozen=True)
class Satellite:
    name: str  # its package, orchestrator/ext/<name>/, and its extra: pip install 'valorch[<name>]'
    summary: str
    packages: tuple[str, ...] = ()  # the import names of its extra's packages
    # its commands: (name on the command line, "module:attribute" in its package), a typer
    # app (a command group) or a command function
    commands: tuple[tuple[str, str], ...] = ()


SATELLITES: tuple[Satellite, ...] = (
    Satellite(
        "attest",
        "in-toto attestations of a qualification: signed (DSSE), pushed, verified",
        ("securesystemslib", "cryptography"),
        (("attest", "command:attest"), ("verify", "command:verify")),
    ),
    Satellite(
        "site",
        "the static site of the results store (trend plots as SVG)",
        (),  # nothing beyond the core (jinja2): its plots are drawn by ext/site/svg.py
        (("site", "command:app"),),
    ),
    Satellite(
        "sbom",
        "an image inventory as a CycloneDX SBOM, validated against its schema",
        ("cyclonedx", "packageurl"),
    ),
    Satellite("notify", "the reports of diff and qualify posted to chat and CI"),
    Satellite(
        "k8s",
        "the Kubernetes executor (experimental: a batch/v1 Job per task)",
        ("kubernetes",),
    ),
)
BY_NAME = {s.name: s for s in SATELLITES}


def missing(name: str) -> tuple[str, ...]:
    """The packages of satellite ``name``'s extra that this interpreter cannot import."""
    return tuple(p for p in BY_NAME[name].packages if _absent(p))


def _absent(package: str) -> bool:
    """Imported, not only found: a half-installed or blocked package counts as absent (the
    satellite imports it next anyway)."""
    try:
        importlib.import_module(package)
    except ImportError:
        return True
    return False


def require(name: str, wanted: str) -> None:
    """Exit 2, naming what was ``wanted`` and the install command, where satellite
    ``name``'s extra is not installed."""
    absent = missing(name)
    if absent:
        s = BY_NAME[name]
        raise InputError(
            f"{wanted} needs valorch's {s.name} extra ({s.summary}); "
            f"{', '.join(absent)} cannot be imported here",
            f"pip install 'valorch[{s.name}]'",
        )


def load(name: str, module: str, wanted: str) -> ModuleType:
    """Module ``module`` of satellite ``name``, its extra checked first (``require``)."""
    require(name, wanted)
    return importlib.import_module(f"orchestrator.ext.{name}.{module}")
