"""Every option and environment variable that names a file, given what is not the file it
expects: a FIFO, /dev/zero, /dev/full, a directory, a symlink loop, a 200 MB file, binary
data, invalid UTF-8, a byte-order mark before garbage, NUL bytes, deep nesting, an alias
bomb, a 5000-digit integer. Each invocation ends (a SIGALRM guard fails the test instead of
hanging it) with exit 2 or 3, a message and no traceback, and neither the working
directory (the store included) nor the files given are changed.

In process, as the CLI fuzz runs the app (test_cli_fuzz_every_flag._invoke), so that the
whole table takes seconds."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path

import pytest
from conftest import run_cli
from test_cli_fuzz_every_flag import _invoke, _snapshot

DEEP = 100_000
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)


def _make_kinds(root: Path) -> dict[str, Path]:
    root.mkdir()
    kinds = {
        "fifo": root / "fifo",
        "dev-zero": Path("/dev/zero"),
        "dev-full": Path("/dev/full"),
        "directory": root / "directory",
        "symlink-loop": root / "loop",
        "200MB": root / "big.yaml",
        "binary": root / "binary",
        "invalid-utf8": root / "latin1.yaml",
        "bom-garbage": root / "bom.yaml",
        "nul-bytes": root / "nul.yaml",
        "deep-nesting": root / "deep.yaml",
        "alias-bomb": root / "bomb.yaml",
        "5000-digits": root / "digits.yaml",
    }
    os.mkfifo(kinds["fifo"])
    kinds["directory"].mkdir()
    kinds["symlink-loop"].symlink_to(kinds["symlink-loop"])
    with open(kinds["200MB"], "wb") as fh:  # sparse: 200 MB to read, nothing on disk
        fh.truncate(200 << 20)
    kinds["binary"].write_bytes(bytes(range(256)) * 64)
    kinds["invalid-utf8"].write_bytes("name: caf\xe9\n".encode("latin-1"))
    kinds["bom-garbage"].write_bytes(b"\xef\xbb\xbf{{ [ :\n")
    kinds["nul-bytes"].write_bytes(b"name: a\x00b\n")
    kinds["deep-nesting"].write_text("[" * DEEP + "]" * DEEP + "\n")
    kinds["alias-bomb"].write_text(BOMB)
    kinds["5000-digits"].write_text("name: x\nversion: " + "9" * 5000 + "\n")
    return kinds


#: file kinds a file read by a command may be given (all of them)
READ_KINDS = [
    "fifo",
    "dev-zero",
    "dev-full",
    "directory",
    "symlink-loop",
    "200MB",
    "binary",
    "invalid-utf8",
    "bom-garbage",
    "nul-bytes",
    "deep-nesting",
    "alias-bomb",
    "5000-digits",
]
#: kinds a file written by a command may be given (a regular file is overwritten: fine)
WRITE_KINDS = ["fifo", "dev-zero", "dev-full", "directory", "symlink-loop"]

HOST_RUN = ["--image", "host", "--suite", "selftest", "--check", "selftest.pass"]
#: (what, argv with {f} for the file, environment with {f}) for every option naming a file
READS = [
    ("jobs show JOB", ["jobs", "show", "{f}"], {}),
    ("jobs runners JOB", ["jobs", "runners", "{f}"], {}),
    ("hosts list --hosts", ["hosts", "list", "--hosts", "{f}"], {}),
    ("VALORCH_HOSTS", ["hosts", "list"], {"VALORCH_HOSTS": "{f}"}),
    ("images list --hosts", ["images", "list", "--hosts", "{f}"], {}),
    ("diff --known-issues", ["diff", "{run}", "{run}", "--known-issues", "{f}"], {}),
    ("results import", ["results", "import", "{f}"], {}),
    ("images import-rst FILE", ["images", "import-rst", "{f}", "--out", "{w}/new.yaml"], {}),
    ("images import-rst --out", ["images", "import-rst", "{w}/page.rst", "--out", "{f}"], {}),
    ("matrix render --tier-policy", ["matrix", "render", "--tier-policy", "{f}"], {}),
    ("run --job", ["run", "--job", "{f}"], {}),
    ("run --hosts", ["run", *HOST_RUN, "--hosts", "{f}"], {}),
    ("run --known-issues", ["run", *HOST_RUN, "--known-issues", "{f}"], {}),
    ("verify --key", ["verify", "--image", "127.0.0.1:1/x:1", "--key", "{f}"], {}),
]
WRITES = [
    ("results export --out", ["results", "export", "{run}", "--out", "{f}"], {}),
    ("diff --out", ["diff", "{run}", "{run}", "--out", "{f}"], {}),
    ("matrix render --out", ["matrix", "render", "--out", "{f}"], {}),
    ("inventory show --out", ["inventory", "show", "{run}", "--out", "{f}"], {}),
    ("run --junit", ["run", *HOST_RUN, "--junit", "{f}"], {}),  # refused before the run
]
#: (option, kind) pairs where the kind is a legitimate value (none yet)
LEGIT: set[tuple[str, str]] = set()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    where = tmp_path_factory.mktemp("kinds")
    db = where / "store.sqlite"
    argv = ["run", "--image", "host", "--suite", "selftest", "--check", "selftest.pass"]
    assert run_cli(*argv, "--db", str(db)).returncode == 0
    run_id = sqlite3.connect(db).execute("SELECT id FROM run").fetchone()[0]
    return where, db, run_id, _make_kinds(where / "files")


def _stat(kinds: dict[str, Path]) -> dict[str, tuple[int, int, int]]:
    out = {}
    for name, p in kinds.items():
        st = p.lstat()
        out[name] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


class _HungError(Exception):
    pass


def _alarm(_signum, _frame):
    raise _HungError


CASES = [(w, a, e, k) for w, a, e in READS for k in READ_KINDS if (w, k) not in LEGIT] + [
    (w, a, e, k) for w, a, e in WRITES for k in WRITE_KINDS
]


@pytest.mark.parametrize(
    "what,argv,env,kind", CASES, ids=[f"{w}-{k}".replace(" ", "_") for w, _, _, k in CASES]
)
def test_a_file_option_given_what_is_not_its_file_fails_cleanly(
    seeded, tmp_path, what, argv, env, kind
):
    _, db, run_id, kinds = seeded
    w = tmp_path
    (w / "store.sqlite").write_bytes(db.read_bytes())
    (w / "page.rst").write_text("Images\n======\n\nNone.\n")
    fill = {"f": str(kinds[kind]), "run": run_id, "w": str(w)}
    argv = [a.format(**fill) for a in argv]
    environ = {
        "VALORCH_DB": str(w / "store.sqlite"),
        "XDG_STATE_HOME": str(w / "state"),
        **{k: v.format(**fill) for k, v in env.items()},
    }
    before, files = _snapshot(w), _stat(kinds)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    try:
        code, output, exc = _invoke(argv, environ, w)
    except _HungError:
        pytest.fail(f"valorch {argv!r} hung on a {kind}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert exc is None, f"valorch {argv!r}: traceback {type(exc).__name__}: {exc}"
    assert code in (2, 3), (argv, code, output[-2000:])
    assert output.strip() and "Traceback" not in output, (argv, output[-2000:])
    assert _snapshot(w) == before, (argv, output[-1000:])
    assert _stat(kinds) == files
