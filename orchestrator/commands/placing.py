"""The options that choose where and how checks run, declared once for every command that
runs checks (``run``, ``qualify``, ``bisect``): ``@where_options`` adds them to a command and
hands it one ``services.placing.Where``, so that the three accept the same flags, with the
same names, checks and help, and none of them lists the flags again.

typer reads a command's parameters from its signature: the decorator gives the wrapper a
signature of the command's own parameters plus ``OPTIONS``, and folds the values of
``OPTIONS`` into the ``where`` argument when the command is called (as a typer callback
would, but for three commands at once)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import typer

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


def _option(name: str, kind: Any, info: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=kind)


#: the shared options, as parameters; their names are the fields of ``Where`` (but
#: ``host_secrets_visible``, its ``secrets_visible``)
OPTIONS: tuple[inspect.Parameter, ...] = (
    _option(
        "executor",
        ExecutorChoice,
        typer.Option("docker", "--executor", callback=flags.executor_available, help=EXECUTOR_HELP),
    ),
    _option(
        "cpu_only",
        bool,
        typer.Option(
            False, "--cpu-only", help="Run GPU images on a CPU host; GPU checks are 'skip'."
        ),
    ),
    _option(
        "hosts_file",
        Path,
        typer.Option(
            None,
            "--hosts",
            envvar="VALORCH_HOSTS",
            help="Host inventory YAML (examples/hosts.yaml) [default: this machine].",
        ),
    ),
    _option(
        "partition",
        str,
        typer.Option(None, "--partition", help="Slurm partition for --executor slurm."),
    ),
    _option(
        "slurm_spool",
        Path,
        typer.Option(
            None,
            "--slurm-spool",
            help="Directory the Slurm nodes share "
            "(probe archive, job output) [default: ./results/slurm].",
        ),
    ),
    _option(
        "namespace",
        str,
        typer.Option(
            "default", "--namespace", help="Kubernetes namespace for --executor kubernetes."
        ),
    ),
    _option(
        "rdma_resource",
        str,
        typer.Option(
            None,
            "--rdma-resource",
            callback=flags.extended_resource("--rdma-resource"),
            help="Kubernetes: the RDMA device plugin's resource (e.g. rdma/hca) that a multi-node "
            "GPU task's pods request, with CAP_IPC_LOCK. A security cost: docs/architecture.md.",
        ),
    ),
    _option(
        "host_secrets_visible",
        bool,
        typer.Option(
            False,
            "--host-secrets-visible",
            help="Run host workloads although a secret valorch holds is in their reach "
            "(/proc): knowingly. Otherwise such a run stops first (docs/architecture.md).",
        ),
    ),
    _option(
        "pull",
        str,
        typer.Option(
            "missing",
            "--pull",
            metavar="<missing|always|never>",
            help="missing: pull absent images; always: pull every time; never: only what the "
            "engine has. A pinned digest is pulled and run as repo@sha256.",
        ),
    ),
    _option(
        "ca",
        Path,
        typer.Option(
            None,
            "--ca",
            help="CA file for the registry's TLS [default: certs.d/<registry>/ca.crt].",
        ),
    ),
    _option(
        "retries",
        int,
        typer.Option(
            2,
            "--retries",
            callback=flags.integer("--retries", 0, 100),
            help="Re-runs on another host after an infrastructure error (0 to 100).",
        ),
    ),
    _option(
        "repeat",
        int,
        typer.Option(
            1,
            "--repeat",
            callback=flags.integer("--repeat", 1, 100),
            help="Run the whole job this many times, one after the other (1 to 100): N runs "
            "of each image for `valorch diff latest:ALIAS:N`, which pools them.",
        ),
    ),
)
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
