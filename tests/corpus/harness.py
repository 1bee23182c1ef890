"""Run the bad-input corpus (cases.yaml) through the real CLI.

Each case gets a fresh workspace: a copy of ``files/``, of the project's image catalog
(``{catalog}``) and of a seeded results database (``{db}``, one imported run: ``{run}``),
plus databases derived from it (``{corrupt_db}``, ``{truncated_db}``, ``{future_db}``).
A case passes when the exit code is the expected one, the output holds no Python
traceback (and the ``expect`` text, when given), and no file of the workspace
(database, catalog, inputs) changed.

As a script it prints every case and the totals ("N bad inputs, N clean"):
``python tests/corpus/harness.py [--subprocess] [ID-GLOB...]``.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import yaml

CORPUS = Path(__file__).resolve().parent
ROOT = CORPUS.parents[1]
FILES = CORPUS / "files"
VALORCH = str(Path(sys.executable).with_name("valorch"))
#: side files SQLite and valorch may leave beside a database without changing it
IGNORED_SUFFIXES = ("-wal", "-shm", "-journal", ".migrate-lock")


def load_cases() -> list[dict]:
    return yaml.safe_load((CORPUS / "cases.yaml").read_text(encoding="utf-8"))


def make_seed(directory: Path) -> tuple[Path, str]:
    """A results database holding the runs of files/good_export.json (made in process)."""
    from orchestrator.store import transfer
    from orchestrator.store.db import open_engine, session_factory

    db = directory / "seed.sqlite"
    doc = json.loads((FILES / "good_export.json").read_text(encoding="utf-8"))
    engine = open_engine(str(db))
    with session_factory(engine)() as session:
        transfer.import_runs(session, doc, "corpus:good_export.json")
        session.commit()
    with engine.connect() as conn:  # fold the WAL into the file: copies are self-contained
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    _derive(db, directory)
    return db, doc["runs"][0]["id"]


def _derive(seed: Path, directory: Path) -> None:
    data = seed.read_bytes()
    page = int.from_bytes(data[16:18], "big") or 65536
    # keep the header page, overwrite every other page: "database disk image is malformed"
    corrupt = bytearray(data)
    for start in range(page, len(corrupt), page):
        corrupt[start : start + page] = bytes(
            (i * 37 + 11) % 256 for i in range(min(page, len(corrupt) - start))
        )
    (directory / "corrupt_db.sqlite").write_bytes(bytes(corrupt))
    (directory / "truncated_db.sqlite").write_bytes(data[: len(data) // 2])
    future = directory / "future_db.sqlite"
    future.write_bytes(data)
    with contextlib.closing(sqlite3.connect(future)) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    # the schema intact, the pages of the run and result tables (and their indexes) garbage:
    # the database opens, its queries fail ("database disk image is malformed")
    with contextlib.closing(sqlite3.connect(seed)) as conn:
        roots = [
            r
            for (r,) in conn.execute(
                "SELECT rootpage FROM sqlite_master WHERE tbl_name IN "
                "('run', 'result', 'task') AND rootpage > 1"
            )
        ]
    rows = bytearray(data)
    for root in roots:
        start = (root - 1) * page
        rows[start : start + page] = bytes((i * 53 + 7) % 256 for i in range(page))
    (directory / "corrupt_rows_db.sqlite").write_bytes(bytes(rows))


@dataclass
class Workspace:
    root: Path
    run_id: str

    @classmethod
    def create(cls, root: Path, seed_dir: Path, run_id: str) -> Workspace:
        shutil.copytree(FILES, root / "f", symlinks=True)
        shutil.copytree(ROOT / "images", root / "catalog", ignore=shutil.ignore_patterns("docker"))
        for name in ("seed", "corrupt_db", "corrupt_rows_db", "truncated_db", "future_db"):
            shutil.copy(seed_dir / f"{name}.sqlite", root / f"{name}.sqlite")
        return cls(root, run_id)

    def expand(self, text: str) -> str:
        r = self.root
        return (
            text.replace("{f}", str(r / "f"))
            .replace("{catalog}", str(r / "catalog"))
            .replace("{db}", str(r / "seed.sqlite"))
            .replace("{run}", self.run_id)
            .replace("{repo}", str(ROOT))
            .replace("{corrupt_db}", str(r / "corrupt_db.sqlite"))
            .replace("{corrupt_rows_db}", str(r / "corrupt_rows_db.sqlite"))
            .replace("{truncated_db}", str(r / "truncated_db.sqlite"))
            .replace("{future_db}", str(r / "future_db.sqlite"))
        )

    def env(self, case: dict) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("VALORCH_")}
        env.update(
            {
                "VALORCH_DB": str(self.root / "seed.sqlite"),
                "VALORCH_CATALOG": str(self.root / "catalog"),
                "COLUMNS": "200",
                "NO_COLOR": "1",
            }
        )
        env.update({k: self.expand(v) for k, v in (case.get("env") or {}).items()})
        return env

    def snapshot(self) -> dict[str, str]:
        out = {}
        for path in sorted(self.root.rglob("*")):
            if path.is_symlink() or not path.is_file() or path.name.endswith(IGNORED_SUFFIXES):
                continue
            out[str(path.relative_to(self.root))] = hashlib.sha256(path.read_bytes()).hexdigest()
        return out


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def invoke_in_process(
    args: list[str], env: dict[str, str], cwd: Path, timeout: int = 120
) -> tuple[int, str]:
    """The typer app as the console script calls it (``App.__call__`` with its error
    handler), with stdout/stderr captured and the environment replaced."""
    from click.testing import CliRunner

    from orchestrator.cli import app

    runner = CliRunner()
    old_cwd, old_env = Path.cwd(), dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    buf = io.StringIO()
    try:
        with runner.isolation() as streams:
            old_handler = signal.signal(signal.SIGALRM, _alarm)
            signal.alarm(timeout)
            try:
                app(args=args, prog_name="valorch")
                code = 0
            except _Timeout:
                buf.write(f"timed out after {timeout} s")
                code = -9
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:  # noqa: BLE001 - what the console script would print
                buf.write(traceback.format_exc())
                code = 1
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, old_handler)
            out = streams[0].getvalue().decode("utf-8", "replace")
            errtext = (
                streams[1].getvalue().decode("utf-8", "replace") if streams[1] is not None else ""
            )
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)
    return code, out + errtext + buf.getvalue()


def invoke_subprocess(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 120
) -> tuple[int, str]:
    env = dict(env)
    env.setdefault("PYTHONPATH", os.environ.get("CORPUS_SRC", str(ROOT)))
    try:
        done = subprocess.run(
            [VALORCH, *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=timeout,
            errors="replace",
        )
    except subprocess.TimeoutExpired:
        return -9, "timed out"
    return done.returncode, done.stdout + done.stderr


def run_case(case: dict, ws: Workspace, *, subprocess_: bool = False) -> list[str]:
    """Problems with one case (empty: clean)."""
    args = [ws.expand(a) for a in case["args"]]
    before = ws.snapshot()
    call = invoke_subprocess if subprocess_ else invoke_in_process
    code, output = call(args, ws.env(case), ws.root)
    after = ws.snapshot()
    problems = []
    if "Traceback" in output:
        problems.append("traceback:\n" + output[-1500:])
    if code != case["exit"]:
        problems.append(f"exit {code}, expected {case['exit']}: {output[-600:]}")
    if case.get("expect") and case["expect"] not in output:
        problems.append(f"message lacks {case['expect']!r}: {output[-600:]}")
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if changed:
        problems.append(f"files changed: {changed}")
    return problems


def main(argv: list[str]) -> int:
    import tempfile

    sub = "--subprocess" in argv
    globs = [a for a in argv if not a.startswith("--")] or ["*"]
    cases = [c for c in load_cases() if any(fnmatch.fnmatch(c["id"], g) for g in globs)]
    clean = 0
    with tempfile.TemporaryDirectory() as tmp:
        seed_dir = Path(tmp) / "seed"
        seed_dir.mkdir()
        _, run_id = make_seed(seed_dir)
        for i, case in enumerate(cases):
            ws = Workspace.create(Path(tmp) / f"ws{i}", seed_dir, run_id)
            problems = run_case(case, ws, subprocess_=sub)
            clean += not problems
            print(f"{'clean' if not problems else 'NOT  '} {case['id']}")
            for p in problems:
                print("      " + p.replace("\n", "\n      ")[:2500])
            shutil.rmtree(ws.root, ignore_errors=True)
    print(f"{len(cases)} bad inputs, {clean} clean")
    return 0 if clean == len(cases) else 1


if __name__ == "__main__":
    # CORPUS_SRC: another checkout to count (before/after a change); default: this one
    sys.path.insert(0, os.environ.get("CORPUS_SRC", str(ROOT)))
    sys.exit(main(sys.argv[1:]))
