"""No file over 1 MB in the repository but the fixtures listed here: tools and binaries come
from the package index through the extras (ruff through `.[test]`), never committed, and a
large file in git costs every clone forever."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 1_000_000  # bytes
#: files allowed over the limit, each with why (none today)
LISTED: dict[str, str] = {}
#: what a checkout holds that is not the repository's (without git to list the tracked files)
UNTRACKED = {".git", ".venv", "results", "build", ".cache", ".pytest_cache", ".hypothesis"}


def tracked() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
        return [ROOT / n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):  # an unpacked source archive
        return [
            p
            for p in ROOT.rglob("*")
            if not UNTRACKED & set(p.relative_to(ROOT).parts) and "__pycache__" not in p.parts
        ]


def large(paths: list[Path]) -> list[str]:
    return [
        f"{p.relative_to(ROOT)}: {p.stat().st_size:,} bytes"
        for p in paths
        if p.is_file() and p.stat().st_size > LIMIT and str(p.relative_to(ROOT)) not in LISTED
    ]


def test_no_file_in_the_tree_is_over_a_megabyte():
    found = large(tracked())
    assert not found, (
        "files over 1 MB: take them from the package index (an extra in pyproject.toml), "
        "generate them, or list them in LISTED with why:\n" + "\n".join(found)
    )


def test_the_check_finds_a_large_file(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "tool.whl").write_bytes(b"\0" * (LIMIT + 1))
    (tmp_path / "small.txt").write_text("x")
    assert large([tmp_path / "tool.whl", tmp_path / "small.txt"]) == ["tool.whl: 1,000,001 bytes"]
