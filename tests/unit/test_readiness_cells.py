"""How readiness pairs a candidate's cells with its basis (services/readiness.cells_of, pure):
each run counts once by its final verdict, a renamed command check is followed only when
neither id is on the other side, a changed definition is compared across the change with a
note, and a published matrix's any-arch cell meets its alias's cells."""

from __future__ import annotations

from datetime import datetime

from orchestrator.regression import readiness as rd
from orchestrator.services.readiness import Record, cells_of, seen_of

T = datetime(2026, 1, 1)
CPU = rd.Env("host", "cpu", "cpu")


def rec(run, check, statuses, decl=None, definition=None, env=CPU):
    return Record(run, check, env, T, tuple(statuses), decl, definition)


def by_check(cand, base):
    cells, _ = cells_of(seen_of(cand), seen_of(base))
    return {c.check: c for c in cells}


def test_a_retried_run_counts_once_as_a_pass():
    got = by_check([rec("c1", "a", ["fail", "pass"]), rec("c2", "a", ["fail"])], [])
    assert got["a"].candidate == rd.Count(1, 2, ("c1", "c2"), ("c2",))


def test_a_rename_is_followed_only_when_each_id_is_on_one_side():
    base = [rec(f"b{i}", "command.old", ["pass"], "d1") for i in range(3)]
    cand = [rec(f"c{i}", "command.new", ["fail"], "d1") for i in range(3)]
    got = by_check(cand, base)
    assert set(got) == {"command.new"} and got["command.new"].basis.total == 3
    assert got["command.new"].notes == ("renamed from command.old (the same declaration)",)
    # the old id still runs in the candidate: no rename, two cells
    both = by_check([*cand, rec("c9", "command.old", ["pass"], "d1")], base)
    assert set(both) == {"command.new", "command.old"} and both["command.new"].basis.total == 0
    # another declaration: not the same check
    other = by_check([rec("c1", "command.new", ["fail"], "d2")], base)
    assert other["command.new"].basis.total == 0 and other["command.old"].candidate.total == 0


def test_a_changed_definition_is_compared_across_the_change_with_a_note():
    got = by_check(
        [rec("c1", "a", ["fail"], definition="bbbbbbbbbbbbbbbb")],
        [rec("b1", "a", ["pass"], definition="aaaaaaaaaaaaaaaa")],
    )
    assert got["a"].basis.total == 1
    assert got["a"].notes == (
        "definition changed (aaaaaaaa → bbbbbbbb): compared across the change",
    )


def test_a_basis_cell_of_any_arch_meets_its_alias():
    gpu = rd.Env("rocm", "rocm", "amd:gfx942")
    anyarch = rd.Env("rocm", "rocm", "*")
    got = by_check([rec("c1", "a", ["pass"], env=gpu)], [rec("m", "a", ["pass"], env=anyarch)])
    assert got["a"].basis.total == 1 and got["a"].env == gpu
