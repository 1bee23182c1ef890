from datetime import date, datetime
from pathlib import Path

import pytest

from orchestrator.errors import SpecError
from orchestrator.regression import known_issues

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path, text):
    p = tmp_path / "known-issues.yaml"
    p.write_text(text)
    return p


def test_example_file_loads():
    ki = known_issues.load(ROOT / "jobs" / "known-issues.yaml", now=datetime(2026, 1, 1))
    assert len(ki.entries) >= 2
    hit = ki.match(
        "cpu_debian12_py3.11_pytorch_1.13", "cpu", "compile.inductor.mlp", "unsupported", "cpu"
    )
    assert hit is not None and hit[1] is False
    assert (
        ki.match(
            "cpu_debian12_py3.11_pytorch_2.13", "cpu", "compile.inductor.mlp", "unsupported", "cpu"
        )
        is None
    )


def test_match_globs_backend_status_and_expiry(tmp_path):
    p = write(
        tmp_path,
        """\
issues:
  - check: "kernels.fft.*"
    images: "rocm6.3_*"
    backend: rocm
    status: [fail, crash]
    reason: hipFFT bug
    url: https://example.org/1
    expires: 2025-06-30
  - check: env.version.pytorch
    status: fail
    reason: wrong wheel
""",
    )
    ki = known_issues.load(p, now=datetime(2025, 6, 30))
    issue, expired = ki.match(
        "rocm6.3_py3.12_pytorch_2.4", "rocm", "kernels.fft.c2c", "crash", "cpu"
    )
    assert issue.reason == "hipFFT bug" and not expired
    assert (
        ki.match("rocm6.3_py3.12_pytorch_2.4", "rocm", "kernels.fft.c2c", "timeout", "cpu") is None
    )
    assert ki.match("rocm6.3_py3.12_pytorch_2.4", "cuda", "kernels.fft.c2c", "crash", "cpu") is None
    assert ki.match("rocm6.2_x", "rocm", "kernels.fft.c2c", "crash", "cpu") is None
    # the day after: the entry excuses nothing, and says so
    later = known_issues.load(p, now=datetime(2025, 7, 1))
    issue, expired = later.match(
        "rocm6.3_py3.12_pytorch_2.4", "rocm", "kernels.fft.c2c", "crash", "cpu"
    )
    assert expired and issue.until == date(2025, 7, 1).replace(day=30, month=6)
    assert [i.check for i in later.expired()] == ["kernels.fft.*"]
    # a paired environment "a → b" is matched on the head image
    assert (
        ki.match("x → anything", "cpu", "env.version.pytorch", "fail", "cpu")[0].reason
        == "wrong wheel"
    )


def test_unknown_key_names_file_line_and_key(tmp_path):
    p = write(
        tmp_path,
        "issues:\n  - check: a\n    reason: r\n  - check: b\n    reason: r\n    expire: 2025-01-01\n",
    )
    with pytest.raises(SpecError) as exc:
        known_issues.load(p)
    assert f"{p}:6:" in exc.value.message and "issues.1" not in exc.value.message
    assert "'expire'" in exc.value.message and "unknown key" in exc.value.message


def test_bad_status_and_missing_reason(tmp_path):
    p = write(tmp_path, "- check: a\n  status: broken\n")
    with pytest.raises(SpecError) as exc:
        known_issues.load(p)
    assert "'reason'" in exc.value.message and "'status" in exc.value.message


def test_bare_list_and_empty_file(tmp_path):
    assert known_issues.load(write(tmp_path, "- {check: a, reason: r}\n")).entries[0].check == "a"
    assert known_issues.load(write(tmp_path, "")).entries == ()
    with pytest.raises(SpecError, match="unknown key 'isues'"):
        known_issues.load(write(tmp_path, "isues: []\n"))


def test_an_arch_scoped_entry_excuses_only_its_arch(tmp_path):
    """arch: scopes the entry to hosts with that GPU arch (or family), in every command that
    excuses through it; a host not known (a published matrix) is not in its scope."""
    p = write(tmp_path, "- {check: kernels.*, arch: gfx94x, status: fail, reason: r}\n")
    ki = known_issues.load(p)
    assert ki.excuse("rocm_a", "rocm", "kernels.mm", "fail", "amd:gfx942") is not None
    assert ki.excuse("rocm_a", "rocm", "kernels.mm", "fail", "amd:gfx942+nvidia:sm_90")
    for host in ("amd:gfx90a", "cpu", "nvidia:sm_90", ""):
        assert ki.excuse("rocm_a", "rocm", "kernels.mm", "fail", host) is None
