"""The options that choose where and how checks run, declared once: ``@where_options`` adds
them to ``run``, ``qualify`` and ``bisect`` (same flags, checks and help) and hands each one
``services.placing.Where``. typer reads parameters from a signature: the wrapper's is the
command's own plus ``OPTIONS``, whose values it folds into ``where`` when called."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

from ..applies import CPU_ONLY, RESUME, Applies
from . import flags


class ExecutorChoice(str, Enum):
    """--executor: the names of ``executors.REGISTRY`` (a typer choice)."""

    host = "host"
    docker = "docker"
    slurm = "slurm"
    kubernetes = "kubernetes"


EXECUTOR_HELP = (
    "host (the local interpreter), docker (this machine's engine or a hosts file's), slurm "
    "(sbatch jobs on your cluster) or kubernetes (experimental: a batch/v1 Job per task; its "
    "manifests are checked against the client's models, but it has NOT been run against a live "
    "cluster: docs/kubernetes.md)."
)


def _option(
    name: str,
    kind: Any,
    default: Any,
    flag: str,
    help: str,
    applies: Applies | None = None,
    **more: Any,
) -> Any:
    info = flags.option(default, flag, applies=applies, help=help, **more)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=kind)


#: the shared options, as parameters; their names are the fields of ``Where`` (but
#: ``host_secrets_visible``, its ``secrets_visible``)
OPTIONS: tuple[inspect.Parameter, ...] = (
    _option(
        "executor", ExecutorChoice, "docker", "--executor", EXECUTOR_HELP, flags.RESUMED,
        callback=flags.satellite_choice("--executor", "kubernetes", "k8s"),
    ),
    _option(
        "cpu_only", bool, False, "--cpu-only",
        "Run GPU images on a CPU host; GPU checks are 'skip'.", flags.RESUMED,
    ),
    _option(
        "hosts_file", Path, None, "--hosts",
        "Host inventory YAML (examples/hosts.yaml) [default: this machine].", flags.HOSTS,
        envvar="VALORCH_HOSTS",
    ),
    _option("partition", str, None, "--partition", "Slurm partition.", flags.SLURM),
    _option(
        "slurm_spool", Path, None, "--slurm-spool",
        "Directory the Slurm nodes share (probe archive, job output) [default: ./results/slurm].",
        flags.SLURM,
    ),
    _option(
        "namespace", str, "default", "--namespace",
        "Kubernetes namespace.", flags.KUBERNETES,
    ),
    _option(
        "rdma_resource", str, None, "--rdma-resource",
        "Kubernetes: the RDMA device plugin's resource (e.g. rdma/hca) that a multi-node GPU "
        "task's pods request, with CAP_IPC_LOCK. A security cost: docs/architecture.md.",
        Applies(
            ("kubernetes",),
            not_with=(RESUME, CPU_ONLY),
            why="a hosts file's rdma, or a Slurm node's feature rdma, opts in elsewhere",
        ),
        callback=flags.extended_resource("--rdma-resource"),
    ),
    _option(
        "host_secrets_visible", bool, False, "--host-secrets-visible",
        "Run host workloads although a secret valorch holds is in their reach (/proc): "
        "knowingly. Otherwise such a run stops first (docs/architecture.md).",
    ),
    _option(
        "pull", str, "missing", "--pull",
        "missing: pull absent images; always: pull every time; never: only what the engine "
        "has. A pinned digest is pulled and run as repo@sha256.", flags.PULLS,
        metavar="<missing|always|never>",
    ),
    _option(
        "ca", Path, None, "--ca",
        "CA file for the registry's TLS [default: certs.d/<registry>/ca.crt].", flags.PULLS,
    ),
    _option(
        "retries", int, 2, "--retries",
        "Re-runs on another host after an infrastructure error (0 to 100).", flags.RETRIES,
        callback=flags.integer("--retries", 0, 100),
    ),
    _option(
        "repeat", int, 1, "--repeat",
        "Run the whole job this many times, one after the other (1 to 100): N runs of each "
        "image for `valorch diff latest:ALIAS:N`, which pools them.", flags.RESUMED,
        callback=flags.integer("--repeat", 1, 100),
    ),
)  # fmt: skip
NAMES = tuple(p.name for p in OPTIONS)


def where_options(command: Callable[..., None]) -> Callable[..., None]:
    """``command(..., where)`` as a typer command that takes ``OPTIONS`` instead of
    ``where``, and is given them as one ``Where``."""
    own = inspect.signature(command)
    params = [p for p in own.parameters.values() if p.name != "where"]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> None:
        from ..services.placing import Where

        given = {name: kwargs.pop(name) for name in NAMES}
        executor = given.pop("executor")
        given["secrets_visible"] = given.pop("host_secrets_visible")
        where = Where(executor=getattr(executor, "value", executor), **given)
        command(**kwargs, where=where)

    wrapper.__signature__ = own.replace(parameters=[*params, *OPTIONS])  # type: ignore[attr-defined]
    # the command's own annotations are read in its module (typing.get_type_hints follows
    # __wrapped__ there); ``where``'s is the decorator's business, not typer's
    own_hints = {k: v for k, v in command.__annotations__.items() if k != "where"}
    wrapper.__annotations__ = own_hints | {p.name: p.annotation for p in OPTIONS}
    return wrapper
