#!/usr/bin/env python3
"""Write valorch_probe/checks.json from the probe's registry: every suite (name, framework,
description, its checks in run order), every check (id, suite, order in its suite,
feature, kind, library, version, needs, nodes, unit, bigger_is_better, description,
limits), how a job's declared checks describe themselves (``registry.DECLARED``), the
protocol's line marker and the evidence table of kernel names (``evidence.KERNEL_LIBRARIES``).
The orchestrator reads this file (orchestrator/checks_manifest.py) to know all of that, and
never imports a probe module to learn it.

    python3 scripts/gen-checks-manifest.py [--out valorch_probe/checks.json] [--check]

--check exits 1 when the file on disk differs from what would be written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generated_file import write_or_check

from valorch_probe import MARKER, PROBE_VERSION
from valorch_probe.evidence import KERNEL_LIBRARIES
from valorch_probe.loader import catalog
from valorch_probe.registry import DECLARED

ROWS = "the kernel table's rows"  # replaced by one line per row
GENERATED = "by scripts/gen-checks-manifest.py from the probe's registry; do not edit by hand"


def render() -> str:
    cat = catalog()
    order = {cid: i for s in cat["suites"] for i, cid in enumerate(s["checks"], start=1)}
    manifest = {
        "generated": GENERATED,
        "probe_version": PROBE_VERSION,
        "marker": MARKER,
        "suites": cat["suites"],
        "checks": [dict(c, order=order[c["id"]]) for c in cat["checks"]],
        "declared": DECLARED,
        "kernel_libraries": ROWS,
    }
    text = json.dumps(manifest, indent=1, ensure_ascii=False)
    rows = ",\n  ".join(json.dumps(list(row), ensure_ascii=False) for row in KERNEL_LIBRARIES)
    return text.replace(json.dumps(ROWS), "[\n  " + rows + "\n ]") + "\n"  # a row a line


def main(argv: list[str] | None = None) -> int:
    return write_or_check(argv, __doc__ or "", ROOT / "valorch_probe" / "checks.json", render)


if __name__ == "__main__":
    sys.exit(main())
