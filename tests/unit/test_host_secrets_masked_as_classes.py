"""A secret is masked as a class, not a literal: whatever a host workload prints is scrubbed
of each secret in every rendering ``hostenv.renderings`` names, wherever it stands in the
text (executors/hostenv.py); and which secrets valorch holds, and where a workload could
read them, is decided from the values, never their names alone (executors/hostguard.py)."""

from __future__ import annotations

import base64
import os
import urllib.parse

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.executors import hostenv, hostguard

SECRET = st.text(
    st.characters(min_codepoint=33, max_codepoint=0x2FFF, exclude_categories=("Cs",)),
    min_size=hostenv.MIN_SECRET,
    max_size=40,
)
AROUND = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30)


def _forms(value: str) -> list[str]:
    raw = value.encode()
    b64 = base64.b64encode(raw).decode()
    return [
        value,
        value[::-1],
        b64,
        b64.rstrip("="),
        base64.urlsafe_b64encode(raw).decode(),
        raw.hex(),
        raw.hex().upper(),
        urllib.parse.quote(value, safe=""),
    ]


@settings(max_examples=300)
@given(SECRET, AROUND, AROUND, st.integers(0, 7))
def test_every_rendering_of_a_secret_is_scrubbed_wherever_it_stands(secret, before, after, which):
    form = _forms(secret)[which]
    printed = f"{before}{form}{after}"
    scrubbed = hostenv.scrub(printed, [secret])
    assert form not in scrubbed
    assert hostenv.SCRUBBED in scrubbed


def test_a_job_that_passes_a_variable_has_made_it_visible():
    env = {
        "GITHUB_TOKEN": "ghp_tokenvalue1",
        "DATABASE_URL": "postgresql://u:dbpassword9@h/db",
        "HOME": "/root",
    }
    assert set(hostguard.held(env, [])) == {"ghp_tokenvalue1", "dbpassword9"}
    assert set(hostguard.held(env, [], passed=["DATABASE_URL"])) == {"ghp_tokenvalue1"}
    argv = ["valorch", "run", "--db", "postgresql://u:argvpassword@h/db"]
    assert hostguard.held({}, argv) == {"argvpassword": "a URL's password"}


def test_this_processs_own_command_line_is_in_reach_and_a_value_it_lacks_is_not():
    with open(f"/proc/{os.getpid()}/cmdline", "rb") as fh:
        mine = fh.read().split(b"\0")[0].decode()
    found = hostguard.in_reach({mine: "argv[0]", "not-anywhere-at-all-1234": "$X"}, os.geteuid())
    assert [(r.name, r.where.split(" (")[0]) for r in found][:1] == [
        ("argv[0]", "valorch's command line")
    ]
    assert all(r.name != "$X" for r in found)
