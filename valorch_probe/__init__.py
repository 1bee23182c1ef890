"""The probe: runs INSIDE the image under test.

Standard library only, Python >= 3.8, and it imports nothing from the
orchestrator: the directory is copied into the container (as the package
``valorch_probe``) with ``put_archive`` and run with ``python3 -m valorch_probe``.
Its suites and checks reach the orchestrator as data, ``checks.json`` beside this file
(generated from the registry by ``scripts/gen-checks-manifest.py``).
"""

PROBE_VERSION = "1"
# Every protocol line on stdout starts with this marker, so that stray prints
# of a framework or a check are never mistaken for results.
MARKER = "@@VALORCH@@ "


def read_text(path: str, limit: int = -1) -> str:
    """At most ``limit`` characters of a text file (all with -1), "" when it cannot be read."""
    try:
        with open(path, errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return ""
