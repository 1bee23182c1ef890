"""A listing answered from the cache is always the listing validating the files would give:
whatever is done to the directory between two listings (a spec's bytes changed with its
size and modification time kept, a file added, removed or renamed, a workload beside the
specs removed), the cached answer equals a fresh build. And the cache is only an
optimisation: a cache directory that is not private, a damaged or forged entry, a build that
fails, all leave the answer to the build."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.services import listing_cache

NAMES = st.sampled_from(["a.yaml", "b.yaml", "sub/c.yaml", "w.py", "sub/w.sh"])
TEXTS = st.text(alphabet="xyz:- \n", max_size=12)
EDITS = st.lists(
    st.tuples(st.sampled_from(["write", "write-same-stat", "remove", "rename"]), NAMES, TEXTS),
    min_size=1,
    max_size=8,
)


def fresh(directory: Path) -> list[dict]:
    """What a validating build would see: each spec's text, every other file's name."""
    rows = []
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            name = str(path.relative_to(directory))
            text = path.read_text() if name.endswith(".yaml") else None
            rows.append({"name": name, "text": text})
    return rows


def apply(directory: Path, edit: tuple[str, str, str]) -> None:
    op, name, text = edit
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if op == "remove":
        path.unlink(missing_ok=True)
    elif op == "rename" and path.exists():
        path.rename(path.with_name("r-" + path.name))
    elif op == "write-same-stat" and path.exists():
        # same size and the same modification time: only the bytes tell the change
        before = path.stat()
        old = path.read_bytes()
        new = (text.encode() * (len(old) + 1))[: len(old)] if text else old[::-1]
        path.write_bytes(new)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    else:
        path.write_text(text)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS)
def test_a_cached_listing_is_always_a_fresh_one(tmp_path_factory, monkeypatch, edits):
    home = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    directory = tmp_path_factory.mktemp("specs")
    (directory / "a.yaml").write_text("first")
    assert listing_cache.rows("t", directory, fresh) == fresh(directory)
    for edit in edits:
        apply(directory, edit)
        assert listing_cache.rows("t", directory, fresh) == fresh(directory)
        assert listing_cache.rows("t", directory, fresh) == fresh(directory)


def counting(directory: Path, calls: list[int]) -> list[dict]:
    calls.append(1)
    return fresh(directory)


def test_an_unchanged_directory_is_built_once(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text("x: 1")
    calls: list[int] = []
    for _ in range(3):
        got = listing_cache.rows("t", tmp_path / "specs", lambda d: counting(d, calls))
        assert got == fresh(tmp_path / "specs")
    assert len(calls) == 1
    place = tmp_path / "cache" / "valorch" / "listings"
    assert oct(place.stat().st_mode & 0o777) == "0o700"
    assert len(list(place.iterdir())) == 1


def test_a_cache_directory_others_may_write_is_never_read(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "specs").mkdir()
    place = tmp_path / "cache" / "valorch" / "listings"
    place.mkdir(parents=True)
    place.chmod(0o777)
    calls: list[int] = []
    for _ in range(2):
        listing_cache.rows("t", tmp_path / "specs", lambda d: counting(d, calls))
    assert len(calls) == 2
    assert list(place.iterdir()) == []


def test_a_damaged_or_forged_entry_is_built_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text("x: 1")
    calls: list[int] = []
    listing_cache.rows("t", tmp_path / "specs", lambda d: counting(d, calls))
    (entry,) = (tmp_path / "cache" / "valorch" / "listings").iterdir()
    key = json.loads(entry.read_text())["key"]
    for damage in (
        "{not json",
        json.dumps({"key": "another key", "rows": [{"name": "forged"}]}),
        json.dumps({"key": key, "rows": "not a list"}),
        json.dumps({"key": key, "rows": [["not", "an", "object"]]}),
    ):
        entry.write_text(damage)
        got = listing_cache.rows("t", tmp_path / "specs", lambda d: counting(d, calls))
        assert got == fresh(tmp_path / "specs")
    assert len(calls) == 5


def test_a_failed_build_keeps_nothing_and_a_fifo_is_left_to_the_build(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    specs = tmp_path / "specs"
    specs.mkdir()

    def failing(directory: Path) -> list[dict]:
        raise ValueError("the spec is wrong")

    for _ in range(2):
        try:
            listing_cache.rows("t", specs, failing)
        except ValueError:
            pass
        else:
            raise AssertionError("the build's error must reach the caller")
    assert list((tmp_path / "cache" / "valorch" / "listings").iterdir()) == []
    os.mkfifo(specs / "pipe.yaml")  # read, it would wait for a writer forever
    calls: list[int] = []
    for _ in range(2):
        listing_cache.rows("t", specs, lambda d: calls.append(1) or [])
    assert len(calls) == 2


def test_a_link_loop_under_the_directory_ends(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    specs = tmp_path / "specs"
    (specs / "a").mkdir(parents=True)
    (specs / "a" / "loop").symlink_to(specs / "a")
    assert listing_cache.rows("t", specs, lambda d: [{"n": 1}]) == [{"n": 1}]
