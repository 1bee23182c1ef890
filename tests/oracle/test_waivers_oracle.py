"""The oracle of the waivers: the rules of docs/readiness.md ("Waivers", "accept add", "When
a waiver can close") written again here, small and independently of the production decision
code (regression/waivers.py), and Hypothesis-generated cases on which production must decide
exactly as the oracle does, for waivers of both sources (a known-issues file's entry, a
stored ``accept add`` row) decided through the one module; every sink of the decision (the
readiness cell's JSON, ``accept list``'s and ``known-issues status``' JSON and text) parsed
back must show it.

Only the sources' own constructors are imported from production to build its inputs (a
file entry: ``KnownIssue``, the YAML schema; a stored row: ``services.accept.waiver``),
``Revocation``, ``ScopedRun``, and the functions under test.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, time, timedelta
from fnmatch import fnmatchcase

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.regression.known_issues import KnownIssue
from orchestrator.regression.waivers import (
    Revocation,
    ScopedRun,
    Waivers,
    closing,
    decide,
)
from orchestrator.render.waivers import acceptances as acceptance_text
from orchestrator.render.waivers import as_dict, noted
from orchestrator.render.waivers import known_issues as issue_text
from orchestrator.services.accept import waiver as stored_waiver
from orchestrator.services.known_issues_status import IssueStatus

DAY0 = date(2027, 1, 31)
CHECKS = ["command.a", "command.b", "kernels.fft.c2c", "kernels.fft.r2c"]
CHECK_GLOBS = [*CHECKS, "command.*", "kernels.fft.[cr]2c", "kernels.*.c2c", "*", "kernels.fft.?2c"]
ALIASES = ["host", "rocm6.3_a", "rocm6.4_b"]
ARCHS = ["cpu", "amd:gfx942", "amd:gfx90a"]
ENV_GLOBS = ["host", "host@cpu", "rocm*", "rocm_*@amd:gfx942", "rocm*@amd:gfx942", "*@cpu", "*"]
ENV_GLOBS += ["rocm6.3_a@amd:gfx9*", "rocm6.?_*", "*@amd:*"]
RATES = [None, 0.0, 0.25, 0.5, 0.9, 1.0]


# -- the oracle: the documented rules, written again -----------------------------------------


def o_covers(a: dict, check: str, alias: str, arch: str) -> bool:
    """ "its check glob matches the cell's check id and its --env glob matches the image alias
    or ALIAS@ARCH"."""
    env_ok = fnmatchcase(alias, a["env"]) or fnmatchcase(alias + "@" + arch, a["env"])
    return fnmatchcase(check, a["check"]) and env_ok


def o_excuses(a: dict, check: str, alias: str, arch: str, rate: float | None, now: datetime):
    """ "it covers it, is not revoked, today (UTC) is on or before its last day, and, with
    --expected-rate, the candidate's pass rate is at least that rate"; --until covers the
    whole day: it gates again from the next day's 00:00 UTC."""
    ends = datetime.combine(a["until"], time()) + timedelta(days=1)
    return (
        o_covers(a, check, alias, arch)
        and a["revoked"] is None
        and now < ends
        and (a["rate"] is None or rate is None or rate >= a["rate"])
    )


FAILED = {"fail", "crash", "timeout", "flaky"}


def o_can_close(
    expects: set[str], runs: list[tuple[str, float, tuple[str, ...]]], need: int, days: float
):
    """ "every environment of its scope that ran its checks in the last --days days, or
    failed in any stored run, has at least --runs runs in the last --days days and passed in
    every one of them; and at least one environment has". ``runs``: (env, days ago, verdicts)."""
    recent: dict[str, list[bool]] = {}
    failed = set()
    for env, ago, verdicts in runs:
        if ago <= days:
            recent.setdefault(env, []).append(all(v == "pass" for v in verdicts))
        if any(v in expects or v in FAILED for v in verdicts):
            failed.add(env)
    must = set(recent) | failed
    blocking = {e for e in must if len(recent.get(e, [])) < need or not all(recent.get(e, []))}
    return bool(must) and not blocking, blocking, failed


# -- generated inputs ----------------------------------------------------------------------

revocations = st.one_of(
    st.none(),
    st.builds(
        Revocation,
        by=st.sampled_from(["bob", "carol"]),
        reason=st.sampled_from(["fixed", "typo"]),
        at=st.just(datetime(2027, 1, 1)),
    ),
)
acceptance_lists = st.lists(
    st.fixed_dictionaries(
        {
            "check": st.sampled_from(CHECK_GLOBS),
            "env": st.sampled_from(ENV_GLOBS),
            "until": st.integers(-3, 3).map(lambda d: DAY0 + timedelta(days=d)),
            "rate": st.sampled_from([None, 0.25, 0.5, 0.9, 1.0]),
            "revoked": revocations,
        }
    ),
    max_size=4,
)
# a moment of the day before, of DAY0 or of the day after, to the second (UTC)
moments = st.integers(-1, 1).flatmap(
    lambda d: st.integers(0, 86399).map(
        lambda s: datetime.combine(DAY0 + timedelta(days=d), time()) + timedelta(seconds=s)
    )
)


def _production(found: list[dict]) -> list:
    return [
        stored_waiver(
            i + 1,
            a["check"],
            a["env"],
            "r",
            "alice",
            a["until"],
            expected_rate=a["rate"],
            created=datetime(2026, 1, 1),
            revoked=a["revoked"],
        )
        for i, a in enumerate(found)
    ]


@settings(max_examples=1300)
@given(
    found=acceptance_lists,
    check=st.sampled_from(CHECKS),
    alias=st.sampled_from(ALIASES),
    arch=st.sampled_from(ARCHS),
    rate=st.sampled_from(RATES),
    now=moments,
)
def test_an_acceptance_excuses_a_red_cell_exactly_as_documented(
    found, check, alias, arch, rate, now
):
    made = _production(found)
    waiver = decide(made, check, alias, arch, now, rate=rate)
    expected = any(o_excuses(a, check, alias, arch, rate, now) for a in found)
    assert waiver.excuses is expected
    covering = [i for i, a in enumerate(found) if o_covers(a, check, alias, arch)]
    if not covering:
        assert waiver.waiver is None
    else:
        shown = waiver.waiver
        assert shown is not None and shown.id - 1 in covering
        # the one shown excuses the cell when any does, and says why not otherwise
        assert o_excuses(found[shown.id - 1], check, alias, arch, rate, now) is expected
        assert bool(waiver.why) is not expected
    # the readiness cell's JSON sink, parsed back, shows the same decision
    cell = json.loads(json.dumps(noted(waiver)))
    assert (cell is None) is (not covering)
    if cell is not None:
        assert cell["live"] is expected
        assert (cell["revoked"] is not None) is (found[cell["id"] - 1]["revoked"] is not None)
    # accept list: its JSON and text say live / expired / revoked as the oracle does
    listed = json.loads(json.dumps([as_dict(a, now) for a in made]))
    text = acceptance_text(listed).splitlines()
    for a, row in zip(found, listed, strict=True):
        ends = datetime.combine(a["until"], time()) + timedelta(days=1)
        want = "revoked" if a["revoked"] is not None else ("live" if now < ends else "expired")
        assert row["state"] == want and row["live"] is (want == "live")
        line = next(x for x in text if x.startswith(f"#{row['id']} "))
        assert (f"({want})" in line) is (want != "live")


ENVS = ["rocm6.3_a@amd:gfx90a", "rocm6.3_a@amd:gfx942", "rocm6.4_b@amd:gfx942", "host@cpu"]
VERDICTS = ["pass", "pass", "pass", "fail", "crash", "timeout", "flaky", "skip", "partial", "error"]
NOW = datetime(2027, 1, 31, 12, 0)
histories = st.lists(
    st.tuples(
        st.sampled_from(ENVS),
        st.floats(0, 30, allow_nan=False).map(lambda d: round(d, 2)),
        st.lists(st.sampled_from(VERDICTS), min_size=1, max_size=3).map(tuple),
    ),
    max_size=12,
)


@settings(max_examples=1300)
@given(
    runs=histories,
    expects=st.sets(
        st.sampled_from(["fail", "crash", "timeout", "error", "partial", "skip"]), min_size=1
    ),
    need=st.integers(1, 4),
    days=st.sampled_from([1.0, 3.5, 7.0, 14.0, 20.0]),
)
def test_a_known_issue_closes_exactly_as_documented(runs, expects, need, days):
    issue = KnownIssue(check="kernels.*", reason="r", status=tuple(sorted(expects))).waiver()
    history = [
        ScopedRun(env, f"r{i:03d}", NOW - timedelta(days=ago), verdicts)
        for i, (env, ago, verdicts) in enumerate(sorted(runs, key=lambda r: -r[1]))
    ]
    decided = closing(issue, history, need, NOW - timedelta(days=days), days)
    can, blocking, failed = o_can_close(set(expects), runs, need, days)
    assert decided.can_close is can
    assert set(decided.short) == blocking and set(decided.failed) == failed
    # known-issues status: its JSON and its text, parsed back, say the same
    row = json.loads(json.dumps(IssueStatus(issue, (), decided).as_dict()))
    assert row["can_close"] is can and set(row["keeps_open"]) == blocking
    first = issue_text([row]).splitlines()[0]
    assert re.search(r"\]: (CAN CLOSE|open);", first).group(1) == ("CAN CLOSE" if can else "open")
    for env in blocking:
        assert env in row["why"]


# -- both sources, one decision: a failure in run, diff and qualify --------------------------

HOSTS = ["cpu", "amd:gfx942", "amd:gfx90a", "nvidia:sm_90", "amd:gfx942+nvidia:sm_90", ""]
BACKENDS = ["rocm", "cuda", "cpu"]
STATUSES = ["fail", "crash", "timeout", "error", "partial", "skip", "missing"]
ARCH_SCOPES = [(), ("gfx942",), ("gfx94x",), ("gfx90a", "sm_90"), ("sm_9x",), ("cpu",)]


def o_on_arch(archs: tuple[str, ...], host: str) -> bool:
    """ "arch: a GPU arch, a family ending in x, cpu, or a list of them; matched against the
    GPUs of the host a run used" (no arch: every host)."""
    if not archs:
        return True
    gpus = [part.rpartition(":")[2] for part in host.split("+") if part]
    return any(g == a or (a.endswith("x") and g.startswith(a[:-1])) for a in archs for g in gpus)


def o_file_excuses(e: dict, check, alias, backend, host, status, today) -> bool:
    """A known-issues entry excuses a failure in its scope, in a status it names, until its
    ``expires`` day (inclusive)."""
    return (
        fnmatchcase(check, e["check"])
        and fnmatchcase(alias, e["images"])
        and e["backend"] in (None, backend)
        and o_on_arch(e["arch"], host)
        and status in e["status"]
        and (e["expires"] is None or today <= e["expires"])
    )


def o_store_excuses(a: dict, check, alias, backend, host, status, today) -> bool:
    """An ``accept add`` row excuses a failed, crashed, timed-out or missing check its check
    and --env globs cover, unless revoked or past its last day."""
    return (
        fnmatchcase(check, a["check"])
        and (fnmatchcase(alias, a["env"]) or fnmatchcase(f"{alias}@{host}", a["env"]))
        and status in ("fail", "crash", "timeout", "missing")
        and a["revoked"] is None
        and today <= a["until"]
    )


days = st.integers(-2, 2).map(lambda d: DAY0 + timedelta(days=d))
file_entries = st.fixed_dictionaries(
    {
        "check": st.sampled_from(CHECK_GLOBS),
        "images": st.sampled_from(["*", "rocm*", "host", "rocm6.?_*"]),
        "backend": st.sampled_from([None, *BACKENDS]),
        "arch": st.sampled_from(ARCH_SCOPES),
        "status": st.lists(st.sampled_from(STATUSES), min_size=1, max_size=3, unique=True),
        "expires": st.one_of(st.none(), days),
    }
)
store_rows = st.fixed_dictionaries(
    {
        "check": st.sampled_from(CHECK_GLOBS),
        "env": st.sampled_from([e for e in ENV_GLOBS if "@" in e or "*" not in e[:-1]]),
        "until": days,
        "revoked": revocations,
    }
)


@settings(max_examples=2000)
@given(
    files=st.lists(file_entries, max_size=3),
    rows=st.lists(store_rows, max_size=3),
    check=st.sampled_from(CHECKS),
    alias=st.sampled_from(ALIASES),
    backend=st.sampled_from(BACKENDS),
    host=st.sampled_from(HOSTS),
    status=st.sampled_from(STATUSES),
    now=moments,
)
def test_a_file_entry_and_a_stored_row_excuse_a_failure_exactly_as_documented(
    files, rows, check, alias, backend, host, status, now
):
    made = Waivers(
        tuple(
            KnownIssue(reason="r", **{**e, "status": tuple(e["status"])}).waiver(f"f.yaml:{i}")
            for i, e in enumerate(files)
        ),
        now,
    ) + [
        stored_waiver(i + 1, a["check"], a["env"], "r", "bob", a["until"], revoked=a["revoked"])
        for i, a in enumerate(rows)
    ]
    today = now.date()
    expected = any(
        o_file_excuses(e, check, alias, backend, host, status, today) for e in files
    ) or any(o_store_excuses(a, check, alias, backend, host, status, today) for a in rows)
    got = made.excuse(alias, backend, check, status, host)
    assert (got is not None) is expected
    # the diff's matcher says the same: shown and holding exactly when excused
    hit = made.match(alias, backend, check, status, host)
    assert (hit is not None and not hit[1]) is expected
