"""What a Slurm job leaves in its spool directory, read (the executor's and a gang's alike):
its job log parsed, its files read as they grow, an infrastructure failure with the job's
facts. ``executor`` and ``gang`` both import this module, which imports neither."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...spec import Execution, Task
from ..transcript import Transcript, infrastructure_failure


def parse_job_log(text: str) -> dict[str, Any]:
    """What the batch script and the step said on stderr (Slurm's job log)."""
    info: dict[str, Any] = {"container_env": {}}
    for line in text.splitlines():
        if m := re.match(r"^valorch: job (\S+) on (\S+) gpus=(\S*)", line):
            info.update(node=m.group(2), gpus=m.group(3))
        elif line.startswith("valorch-step: env ") and "=" in line:
            key, _, value = line[len("valorch-step: env ") :].partition("=")
            info["container_env"][key] = value
        elif m := re.match(r"^valorch-step: (container|image|exit) (\S+)", line):
            info[m.group(1)] = m.group(2)
        elif m := re.match(r"^valorch-step: ((create|copy)-failed)", line):
            info["failed"] = m.group(1)
    return info


def exit_of(info: dict[str, Any]) -> int | None:
    """The container's exit code the step logged, or None."""
    return int(info["exit"]) if str(info.get("exit", "")).lstrip("-").isdigit() else None


def feed(path: Path, offset: int, transcript: Transcript) -> int:
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            chunk = fh.read()
    except FileNotFoundError:
        return offset
    if chunk:
        transcript.feed(chunk)
    return offset + len(chunk)


def read_log(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def last_lines(text: str, n: int = 3) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-n:])[-600:] or "no job log"


def digest_of(value: str | None) -> str | None:
    if not value:
        return None
    return value.split("@", 1)[1] if "@" in value else value


def job_failure(
    task: Task, message: str, timings: dict[str, float], slurm: dict[str, Any]
) -> Execution:
    return infrastructure_failure(task, message, timings=timings, meta={"slurm": slurm})
