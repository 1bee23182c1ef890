"""A recorded directory (``valorch hosts probe --record DIR``, hosts/record.py) turned into
test fixtures (pure file work): the SMI outputs under ``tools/recorded/LABEL/``, the KFD
topology as ``kfd_LABEL/nodes/``, torch's device properties as a build description for the
torch stand-in of the acceptance tests (``fake_torch/LABEL.json``), the probe's result lines
and the kernel names with the library the probe's ``evidence.KERNEL_LIBRARIES`` (through the
manifest) names for each today
(``evidence/kernel-names-LABEL.tsv``, "-" where no pattern knows the name: review that column
before committing it; tests/unit/test_probe_evidence.py then holds the table to it). The
record is already scrubbed; nothing else is changed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from ..checks_manifest import library_of_kernel
from ..errors import InputError

#: what the torch stand-in takes of each recorded device
DEVICE_FIELDS = ("name", "major", "minor", "gcnArchName", "total_memory", "multi_processor_count")


def to_fixtures(record: Path, fixtures: Path, label: str) -> list[Path]:
    """Write the fixtures of ``record`` under ``fixtures``; the paths written."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", label):
        raise InputError(
            f"fixture label {label!r}: use lower-case letters, digits, '.', '_' or '-'",
            "e.g. mi300x-rocm6.3",
        )
    if not (record / "manifest.json").is_file():
        raise InputError(
            f"{record}: no manifest.json: not a directory `valorch hosts probe --record` wrote",
            "record one with valorch hosts probe --record DIR",
        )
    written: list[Path] = []

    def new(dest: Path) -> Path:
        dest.parent.mkdir(parents=True, exist_ok=True)
        written.append(dest)
        return dest

    def put(src: Path, dest: Path) -> None:
        shutil.copyfile(src, new(dest))

    for src in sorted((record / "smi").glob("*")):
        put(src, fixtures / "tools" / "recorded" / label / src.name)
    for src in sorted((record / "kfd").rglob("*")):
        if src.is_file():
            put(src, fixtures / f"kfd_{label}" / src.relative_to(record / "kfd"))
    facts = json.loads((record / "torch" / "device-properties.json").read_text())
    build = {
        "_source": f"recorded by valorch hosts probe --record ({label})",
        "version": facts.get("torch"),
        "cuda": facts.get("cuda"),
        "hip": facts.get("hip"),
        "arch_list": facts.get("arch_list") or [],
        "devices": [{k: d.get(k) for k in DEVICE_FIELDS} for d in facts.get("devices") or []],
    }
    new(fixtures / "fake_torch" / f"{label}.json").write_text(
        json.dumps(build, indent=1, sort_keys=True) + "\n"
    )
    put(record / "probe" / "results.jsonl", fixtures / "evidence" / f"results-{label}.jsonl")
    vendor = "amd" if facts.get("hip") else "nvidia" if facts.get("cuda") else None
    rows = [
        f"# kernel names recorded by valorch hosts probe --record ({label}): name, vendor, library"
    ]
    seen = set()
    for line in (record / "probe" / "kernel-names.tsv").read_text().splitlines():
        if not line or line.startswith("#") or "\t" not in line:
            continue
        name = line.split("\t", 1)[1]
        if name not in seen and vendor:
            seen.add(name)
            rows.append(f"{name}\t{vendor}\t{library_of_kernel(name, vendor) or '-'}")
    new(fixtures / "evidence" / f"kernel-names-{label}.tsv").write_text("\n".join(rows) + "\n")
    return written
