"""A multi-node task's Slurm job as text (pure): --nodes=N --ntasks-per-node=1, the
rendezvous from SLURM_JOB_NODELIST, srun per node, and the sweep step after it."""

from orchestrator.executors.slurm.client import SlurmRequirement, batch_script, sbatch_argv
from orchestrator.executors.slurm.executor import create_options, requirement, step_argv, sweep_argv
from orchestrator.spec import HostSpec, ImageSpec, SuiteRef, Task

NODES = (HostSpec(name="n0", endpoint="slurm://n0"), HostSpec(name="n1", endpoint="slurm://n1"))
IMAGE = ImageSpec(alias="img", reference="img:1", backend="rocm")
GANG = Task(
    image=IMAGE,
    suite=SuiteRef(name="multinode", nodes=2, gpus_per_node=4),
    host=NODES[0],
    checks=(),
    nodes=NODES,
)


def test_sbatch_asks_for_n_nodes_one_task_each_and_gpus_per_node():
    argv = sbatch_argv("t", requirement(GANG), 600, "/spool/run", "/spool/run/t.sbatch")
    assert "--nodes=2" in argv and "--ntasks-per-node=1" in argv and "--ntasks=1" not in argv
    assert "--gres=gpu:4" in argv
    single = sbatch_argv("t", SlurmRequirement("cpu"), 600, "/spool/run", "/spool/run/t.sbatch")
    assert "--ntasks=1" in single and not any(a.startswith("--nodes") for a in single)


def test_srun_starts_the_step_on_every_node_with_host_networking():
    argv = step_argv(GANG, "run-1", "/spool/probe.tar")
    assert argv[:5] == [
        "srun",
        "--nodes=2",
        "--ntasks-per-node=1",
        "--kill-on-bad-exit=1",
        "--wait=15",
    ]
    assert "--output=valorch-%j-%t.stdout" in argv and argv[argv.index("bash")] == "bash"
    opts = create_options(GANG, "run-1")
    assert opts[opts.index("--network") + 1] == "host"
    single = GANG.model_copy(update={"nodes": (), "suite": SuiteRef(name="smoke")})
    assert step_argv(single, "run-1", "/p.tar")[0] == "bash" and sweep_argv(single, "run-1") == []


def test_the_batch_script_finds_the_rendezvous_and_sweeps_after_the_step():
    script = batch_script(["srun", "x"], prelude="echo prelude", after=sweep_argv(GANG, "run-1"))
    lines = script.splitlines()
    assert "echo prelude" in lines
    main = next(i for i, line in enumerate(lines) if line.startswith("srun x >"))
    assert lines[main + 1] == "rc=$?" and lines[main + 2].startswith(
        "srun --nodes=2 --ntasks-per-node=1 bash -c"
    )
    assert "org.valorch.run=run-1" in lines[main + 2] and lines[main + 3] == 'exit "$rc"'
    from orchestrator.executors.slurm.client import GANG_PRELUDE

    assert 'scontrol show hostnames "$SLURM_JOB_NODELIST"' in GANG_PRELUDE
