"""An option given where it has no effect is said, never silently ignored.

Every option that declares where it acts (``flags.option(..., applies=...)``, read back by
orchestrator/commands/inert.py) is given, through the real console script, once in each
situation its declaration says silences it: each mode it does nothing in, without the mode
it needs, with an executor it does not act with. Each is exit 2, the message names the
option and why it does nothing, a hint says what to do, no traceback, nothing run, no file
written and no store created. The same option set by its environment variable is a
warning, not an error; and the combinations where the option does act are not refused.
"""

from __future__ import annotations

import pytest
from conftest import run_cli
from typer.main import get_command

from orchestrator.applies import RESUME
from orchestrator.cli import app
from orchestrator.commands.inert import declared

#: what each command needs to parse, and a value for each option (a switch needs none)
BASE = {
    "run": ("--image", "host"),
    "qualify": ("--baseline", "v1", "--image", "host"),
    "bisect": ("--check", "smoke.env.python", "host", "host"),
    "diff": ("latest", "latest"),
    "readiness": ("--job", "smoke.yaml", "--basis", "v1"),
    "inventory audit": ("--image", "host"),
    "inventory diff": ("a", "b"),
    "inventory show": ("1",),
}
VALUES = {
    "--image": "host", "--job": "job.yaml", "--suite": "smoke", "--check": "env.*",
    "--deadline": "5", "--timeout": "5", "--attempts": "2", "--repeat": "2", "--retries": "5",
    "--executor": "docker", "--namespace": "ci", "--rdma-resource": "rdma/hca",
    "--partition": "gpu", "--slurm-spool": "spool", "--hosts": "hosts.yaml", "--pull": "never",
    "--ca": "ca.crt", "--workload-root": ".", "--window": "3d", "--since": "30",
    "--format": "md", "--resume": "0123abcd", "--readiness": "v1", "--close-runs": "2",
    "--close-days": "7",
}  # fmt: skip


def _given(param) -> tuple[str, ...]:
    """The option typed on a command line: a switch alone, else with a value."""
    flag = param.opts[0]
    return (flag,) if param.is_flag else (flag, VALUES[flag])


def _mode(flag: str) -> tuple[str, ...]:
    """A mode typed: ``--level 1`` as written, ``--resume`` with a value."""
    return tuple(flag.split()) if " " in flag else _given_flag(flag)


def _given_flag(flag: str) -> tuple[str, ...]:
    return (flag, VALUES[flag]) if flag in VALUES else (flag,)


def _examples():
    """(id, argv, flag) for each way each declared option is silenced."""
    for path, command in _commands(get_command(app)):
        params = {p.name: p for p in command.params}
        cmd, base = tuple(path.split()), BASE.get(path, ())
        for name, applies in declared(command).items():
            flag, given = params[name].opts[0], _given(params[name])
            for mode in (m for m in applies.not_with if m.param in params):
                before = () if mode is RESUME else base  # a resumed run names no image
                yield (
                    f"{path} {flag} with {mode.flag}",
                    (*cmd, *before, *_mode(mode.flag), *given),
                    flag,
                )
            if applies.needs is not None:
                yield f"{path} {flag} without {applies.needs.flag}", (*cmd, *base, *given), flag
            if applies.executors and "executor" in params:
                other = next(e for e in ("docker", "slurm", "host") if e not in applies.executors)
                chosen = ("--executor", other) if other != "docker" else ()
                yield f"{path} {flag} on {other}", (*cmd, *base, *chosen, *given), flag


def _commands(command, path=""):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, f"{path} {name}".strip())


EXAMPLES = list(_examples())


def _snapshot(root):
    return sorted((p.relative_to(root), p.stat().st_size) for p in root.rglob("*"))


@pytest.mark.parametrize(("argv", "flag"), [e[1:] for e in EXAMPLES], ids=[e[0] for e in EXAMPLES])
def test_each_declared_option_exits_2_where_it_has_no_effect(argv, flag, tmp_path):
    (tmp_path / "ca.crt").write_text("not used\n")
    before = _snapshot(tmp_path)
    db = tmp_path / "store.sqlite"
    proc = run_cli(*argv, cwd=tmp_path, env={"VALORCH_DB": str(db)}, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    first = proc.stderr.strip().splitlines()[0]
    assert "has no effect" in first and flag in first, proc.stderr
    assert "hint:" in proc.stderr
    assert not db.exists()
    assert _snapshot(tmp_path) == before  # nothing written, no store, no spool


def test_every_command_that_polices_an_option_is_exercised():
    """The declarations reach the commands the docs name (one lost in a merge would leave
    its command unpoliced): the example ids start with each command's path."""
    ids = [e[0] for e in EXAMPLES]
    for path in ("run", "qualify", "hosts check", "diff", "readiness", "inventory audit",
                 "inventory diff", "inventory show"):  # fmt: skip
        assert any(i.startswith(f"{path} --") for i in ids), path


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
