"""The copy-paste command that re-runs one check on one image (pure)."""

from __future__ import annotations

import shlex


def suite_for(check: str) -> str:
    """The built-in suite that runs ``check``; a declared check's suite is its id's first part."""
    from ..checks_manifest import manifest

    return manifest().suite_of(check) or check.split(".", 1)[0]


def command(
    *,
    alias: str,
    reference: str,
    digest: str | None,
    check: str,
    suite: str | None = None,
    local: bool = False,
    host: bool = False,
    cpu_only: bool = False,
) -> str:
    """``valorch run --image repo@sha256:… --suite S --check ID``: pinned to the digest that
    was tested where the image came from a registry; the alias for local and host images."""
    if host or reference == "host":
        image = "host"
    elif digest and not local and "@" not in reference:
        last = reference.rsplit("/", 1)[-1]
        repo = reference.rsplit(":", 1)[0] if ":" in last else reference
        image = f"{repo}@{digest}"
    else:
        image = alias
    argv = ["valorch", "run", "--image", image, "--suite", suite or suite_for(check)]
    argv += ["--check", check] + (["--cpu-only"] if cpu_only else [])
    return shlex.join(argv)  # every argument quoted: any of them may come from an import
