"""Jobs on the host interpreter (no Docker) for the gate's acceptance tests: deterministic
checks of the ``selftest`` suite and declared ``command`` checks."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

import yaml


def job(
    tmp_path: Path, name: str, selftest: list[str], commands: dict[str, int] | None = None
) -> Path:
    """A job of the host image: the given selftest checks, and ``command.<id>`` checks that exit
    with the given code (each expects 0: a non-zero code is a real failing check)."""
    suites: list[dict] = [{"name": "selftest", "checks": selftest}] if selftest else []
    if commands:
        suites.append(
            {
                "name": "command",
                "commands": [
                    {"id": cid, "argv": ["python3", "-c", f"import sys; sys.exit({code})"]}
                    for cid, code in commands.items()
                ],
            }
        )
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "images": ["host"], "suites": suites}))
    return path


def publish_baseline(cli, job_path: Path, version: str, name: str) -> None:
    """Run the job, publish its matrix as ``version`` and name it baseline ``name``."""
    proc = cli("run", "--job", str(job_path), "--executor", "host", "--no-matrix", "--no-gate")
    assert proc.returncode == 0, proc.stderr
    job_name = job_path.stem
    proc = cli("matrix", "publish", "--version", version, "--job", job_name)
    assert proc.returncode == 0, proc.stderr
    proc = cli("baseline", "set", name, version)
    assert proc.returncode == 0, proc.stderr


def qualify(cli, job_path: Path, baseline: str, out: Path, *extra: str):
    return cli(
        "qualify",
        "--job",
        str(job_path),
        "--baseline",
        baseline,
        "--executor",
        "host",
        "--out-dir",
        str(out),
        *extra,
    )


def junit_cases(path: Path) -> dict[str, tuple[str, str]]:
    """check id → (outcome, message): failure, skipped, passed (system-out text as the message)."""
    out = {}
    for case in ET.fromstring(path.read_text()).iter("testcase"):
        for tag in ("failure", "skipped", "error"):
            node = case.find(tag)
            if node is not None:
                out[case.get("name")] = (tag, node.get("message") or "")
                break
        else:
            sysout = case.find("system-out")
            out[case.get("name")] = ("passed", sysout.text if sysout is not None else "")
    return out
