"""Random mutations of the project's real job specs, catalog, hosts and known-issues files
fed to their loaders: whatever the bytes, only InputError (exit 2, with file and line)
may come out, never another exception (a traceback for the user)."""

import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.catalog.core import load_file, load_job
from orchestrator.errors import InputError
from orchestrator.hosts.inventory import load_hosts
from orchestrator.regression import known_issues

ROOT = Path(__file__).resolve().parents[2]
JOBS = sorted(p for p in (ROOT / "jobs").glob("*.yaml") if p.name != "known-issues.yaml")
CATALOGS = sorted((ROOT / "images").glob("*.yaml"))
LOADERS = (
    [(p, "job") for p in JOBS]
    + [(p, "catalog") for p in CATALOGS]
    + [(ROOT / "examples" / "hosts.yaml", "hosts"), (ROOT / "jobs" / "known-issues.yaml", "known")]
)

SWAPS = [
    0,
    -1,
    1e300,
    "",
    "x" * 300,
    [],
    {},
    [1, [2]],
    {"a": None},
    None,
    True,
    "2026-13-45",
    ".nan",
    "../../etc",
]


def _walk(data, path=()):
    """Every (container, key) of a parsed document."""
    if isinstance(data, dict):
        for k in list(data):
            yield data, k
            yield from _walk(data[k])
    elif isinstance(data, list):
        for i in range(len(data)):
            yield data, i
            yield from _walk(data[i])


@st.composite
def mutated(draw):
    path, kind = draw(st.sampled_from(LOADERS))
    raw = path.read_bytes()
    for _ in range(draw(st.integers(1, 3))):
        op = draw(
            st.sampled_from(
                [
                    "flip",
                    "truncate",
                    "insert",
                    "dup_line",
                    "drop_line",
                    "delete_key",
                    "swap_type",
                    "dup_key",
                ]
            )
        )
        if op == "flip" and raw:
            i = draw(st.integers(0, len(raw) - 1))
            raw = raw[:i] + bytes([draw(st.integers(0, 255))]) + raw[i + 1 :]
        elif op == "truncate":
            raw = raw[: draw(st.integers(0, len(raw)))]
        elif op == "insert":
            i = draw(st.integers(0, len(raw)))
            raw = raw[:i] + draw(st.binary(min_size=1, max_size=8)) + raw[i:]
        elif op in ("dup_line", "drop_line", "dup_key"):
            lines = raw.split(b"\n")
            i = draw(st.integers(0, max(0, len(lines) - 1)))
            if op == "drop_line":
                del lines[i]
            else:
                lines.insert(i, lines[i] if lines else b"")
            raw = b"\n".join(lines)
        else:
            try:
                data = yaml.safe_load(raw.decode("utf-8"))
            except (yaml.YAMLError, UnicodeDecodeError, ValueError):
                continue
            spots = list(_walk(data))
            if not spots:
                continue
            container, key = draw(st.sampled_from(spots))
            if op == "delete_key":
                del container[key]
            else:
                container[key] = draw(st.sampled_from(SWAPS))
            raw = yaml.safe_dump(data, sort_keys=False).encode()
    return kind, path.name, raw


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A copy of jobs/ (with its workloads), where a mutated file is written."""
    d = tmp_path_factory.mktemp("mutations")
    shutil.copytree(ROOT / "jobs" / "workloads", d / "workloads")
    return d


@settings(
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=mutated())
def test_only_input_errors_escape_the_loaders(case, workdir):
    kind, name, raw = case
    path = workdir / name
    path.write_bytes(raw)
    load = {"job": load_job, "catalog": load_file, "hosts": load_hosts, "known": known_issues.load}[
        kind
    ]
    try:
        load(path)
    except InputError as exc:
        assert str(exc).startswith(str(path)) or str(path) in str(exc), exc  # names the file
