"""An option given where it has no effect is said, never silently ignored.

Every rule of the table (orchestrator/commands/inert.py) is run through the real console
script with its own example argv: exit 2, the message names the option and why it does
nothing, a hint says what to do, no traceback, nothing run, no file written and no store
created. The same option set by its environment variable is a warning, not an error; and
the combinations where the option does act are not refused.
"""

from __future__ import annotations

import pytest
from conftest import run_cli

from orchestrator.commands.inert import RULES, Rule


def _flag(rule: Rule) -> str:
    return next(a for a in reversed(rule.example) if a.startswith("--") and a != "--json")


def _snapshot(root):
    return sorted((p.relative_to(root), p.stat().st_size) for p in root.rglob("*"))


@pytest.mark.parametrize(
    "rule", RULES, ids=[f"{r.command}:{r.param}:{' '.join(r.example[-2:])}" for r in RULES]
)
def test_each_rule_exits_2_naming_the_option(rule, tmp_path):
    (tmp_path / "ca.crt").write_text("not used\n")
    before = _snapshot(tmp_path)
    db = tmp_path / "store.sqlite"
    proc = run_cli(*rule.example, cwd=tmp_path, env={"VALORCH_DB": str(db)}, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    first = proc.stderr.strip().splitlines()[0]
    assert "has no effect" in first, proc.stderr
    # a resumed run's --namespace is refused by the executor rule first: either names it
    assert _flag(rule).split("/")[0] in first, proc.stderr
    assert "hint:" in proc.stderr
    assert not db.exists()
    assert _snapshot(tmp_path) == before  # nothing written, no store, no spool


def test_every_rule_names_an_option_its_command_has():
    """A rule whose example does not reach its own command would test nothing."""
    for rule in RULES:
        assert " ".join(rule.example).startswith(rule.command), rule


def _silent_cluster(tmp_path):
    """A Slurm configuration whose controller nothing answers (the discard port): the
    verdict below must not depend on whether some other test has a cluster running."""
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "ClusterName=nowhere\nSlurmctldHost=localhost\nSlurmctldPort=9\n"
        "NodeName=n1 CPUs=1 State=UNKNOWN\nPartitionName=p Nodes=n1 Default=YES\n"
    )
    return str(conf)


def test_the_environment_variable_is_a_warning(tmp_path):
    """VALORCH_HOSTS is documented as set for every command: with a cluster executor it is
    a warning, and the command goes on (here to the unknown image, its own exit 2: the
    images are resolved before the cluster is asked, so it says so even with no cluster)."""
    proc = run_cli(
        "run",
        "--image",
        "no-such-image",
        "--executor",
        "slurm",
        cwd=tmp_path,
        env={
            "VALORCH_HOSTS": str(tmp_path / "hosts.yaml"),
            "VALORCH_DB": str(tmp_path / "s"),
            "SLURM_CONF": _silent_cluster(tmp_path),
        },
        timeout=120,
    )
    assert "warning: VALORCH_HOSTS (--hosts) has no effect with --executor slurm" in proc.stderr
    assert "unknown image 'no-such-image'" in proc.stderr
    assert proc.returncode == 2


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "--image", "no-such-image", "--json", "--no-matrix"),  # agrees with --json
        ("run", "--image", "no-such-image", "--executor", "slurm", "--partition", "gpu"),
        ("run", "--image", "no-such-image", "--executor", "kubernetes", "--namespace", "ci"),
        ("diff", "latest", "latest", "--format", "json", "--json"),
        ("hosts", "check", "--level", "1", "--since", "0.5", "--image", "no-such-image"),
    ],
)
def test_where_the_option_acts_it_is_not_refused(argv, tmp_path):
    proc = run_cli(*argv, cwd=tmp_path, env={"VALORCH_DB": str(tmp_path / "s")}, timeout=120)
    assert "has no effect" not in proc.stderr
    assert "Traceback" not in proc.stderr
