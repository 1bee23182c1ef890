"""Options that would have no effect where they were given: one table, checked once for the
whole command tree before a command runs.

An option typed on the command line that the situation ignores (``--partition`` without
``--executor slurm``, ``--format md`` with ``--json``) is exit 2 naming the option, why it
does nothing, and what to do: nothing is loaded, run, written or stored. The same option
set through its environment variable (``VALORCH_HOSTS``) is a warning instead: a variable
set for every command is documented to be tolerated where a command does not use it.
docs/input-validation.md lists every rule.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InputError

Params = Mapping[str, Any]


def _value(params: Params, name: str) -> Any:
    v = params.get(name)
    return v.value if isinstance(v, enum.Enum) else v


def _executor_not(*names: str) -> Callable[[Params], bool]:
    return lambda p: _value(p, "executor") not in names


def _executor_in(*names: str) -> Callable[[Params], bool]:
    return lambda p: _value(p, "executor") in names


def _with_json(p: Params) -> bool:
    return bool(p.get("as_json")) and str(_value(p, "fmt")) != "json"


def _resuming(p: Params) -> bool:
    return bool(p.get("resume"))


@dataclass(frozen=True)
class Rule:
    """``param`` (the function parameter's name in ``command``) has no effect when
    ``inert(params)``; ``example`` is an argv that shows it (docs and the test run each)."""

    command: str  # the command's path, e.g. "run", "inventory audit"
    param: str
    inert: Callable[[Params], bool]
    why: str  # completes "--X has no effect ..."
    hint: str
    example: tuple[str, ...]


_CLUSTER = ("slurm", "kubernetes")
_CLUSTER_PLACES = "with --executor slurm or kubernetes (the cluster places every job itself)"
_RESUMED = (
    ("suite", "--suite", "smoke"),
    ("check", "--check", "env.*"),
    ("deadline", "--deadline", "5"),
    ("timeout", "--timeout", "5"),
    ("attempts", "--attempts", "2"),
    ("cpu_only", "--cpu-only"),
    ("pull", "--pull", "never"),
    ("ca", "--ca", "ca.crt"),
    ("repeat", "--repeat", "2"),
    ("workload_root", "--workload-root", "."),
    ("executor", "--executor", "docker"),
    ("namespace", "--namespace", "ci"),
    ("rdma_resource", "--rdma-resource", "rdma/hca"),
    ("partition", "--partition", "gpu"),
    ("slurm_spool", "--slurm-spool", "spool"),
)

RULES: tuple[Rule, ...] = (
    Rule(
        "run",
        "namespace",
        _executor_not("kubernetes"),
        "without --executor kubernetes",
        "drop --namespace, or add --executor kubernetes",
        ("run", "--image", "host", "--namespace", "ci"),
    ),
    Rule(
        "run",
        "rdma_resource",
        _executor_not("kubernetes"),
        "without --executor kubernetes (a hosts file's rdma, or a Slurm node's feature rdma, "
        "opts in elsewhere)",
        "drop --rdma-resource, or add --executor kubernetes",
        ("run", "--image", "host", "--rdma-resource", "rdma/hca"),
    ),
    Rule(
        "run",
        "partition",
        _executor_not("slurm"),
        "without --executor slurm",
        "drop --partition, or add --executor slurm",
        ("run", "--image", "host", "--partition", "gpu"),
    ),
    Rule(
        "run",
        "slurm_spool",
        _executor_not("slurm"),
        "without --executor slurm",
        "drop --slurm-spool, or add --executor slurm",
        ("run", "--image", "host", "--slurm-spool", "spool"),
    ),
    Rule(
        "run",
        "retries",
        _executor_in(*_CLUSTER),
        "with --executor slurm or kubernetes (the cluster keeps its own retries)",
        "drop --retries",
        ("run", "--image", "host", "--executor", "kubernetes", "--retries", "5"),
    ),
    Rule(
        "run",
        "hosts_file",
        _executor_in(*_CLUSTER),
        _CLUSTER_PLACES,
        "drop --hosts (or unset VALORCH_HOSTS)",
        ("run", "--image", "host", "--executor", "slurm", "--hosts", "hosts.yaml"),
    ),
    Rule(
        "run",
        "pull",
        _executor_not("docker"),
        "without --executor docker (a cluster pulls its own images; host runs no image)",
        "drop --pull",
        ("run", "--image", "host", "--executor", "host", "--pull", "always"),
    ),
    Rule(
        "run",
        "ca",
        _executor_not("docker"),
        "without --executor docker (only docker's pulls reach a registry from here)",
        "drop --ca",
        ("run", "--image", "host", "--executor", "kubernetes", "--ca", "ca.crt"),
    ),
    Rule(
        "run",
        "show_matrix",
        lambda p: bool(p.get("as_json")) and bool(p.get("show_matrix")),
        "with --json (the JSON has the results; no matrix is printed)",
        "drop --matrix, or drop --json",
        ("run", "--image", "host", "--json", "--matrix"),
    ),
    Rule(
        "run",
        "workload_root",
        lambda p: not p.get("job") and not p.get("resume"),
        "without --job (only a job's pytest workloads ship files)",
        "drop --workload-root, or run a job with --job",
        ("run", "--image", "host", "--workload-root", "."),
    ),
    *(
        Rule(
            "run",
            name,
            _resuming,
            "with --resume",
            "--resume repeats the stored batch as it was planned; drop the option",
            ("run", "--resume", "0123abcd", *args),
        )
        for name, *args in _RESUMED
    ),
    Rule(
        "qualify",
        "partition",
        _executor_not("slurm"),
        "without --executor slurm",
        "drop --partition, or add --executor slurm",
        ("qualify", "--baseline", "v1", "--image", "host", "--partition", "gpu"),
    ),
    Rule(
        "qualify",
        "hosts_file",
        _executor_in(*_CLUSTER),
        _CLUSTER_PLACES,
        "drop --hosts (or unset VALORCH_HOSTS)",
        (
            "qualify",
            "--baseline",
            "v1",
            "--image",
            "host",
            "--executor",
            "kubernetes",
            "--hosts",
            "hosts.yaml",
        ),
    ),
    Rule(
        "qualify",
        "readiness_window",
        lambda p: not p.get("readiness"),
        "without --readiness (it says which runs --readiness counts)",
        "drop --window, or add --readiness BASIS",
        ("qualify", "--baseline", "v1", "--image", "host", "--window", "3d"),
    ),
    Rule(
        "hosts check",
        "since",
        lambda p: p.get("level") != 1,
        "without --level 1 (only level 1 scans the kernel log)",
        "drop --since, or add --level 1",
        ("hosts", "check", "--level", "0", "--since", "30"),
    ),
    *(
        Rule(
            " ".join(cmd),
            "fmt",
            _with_json,
            "with --json (--json prints JSON whatever --format says)",
            "drop --format, or drop --json",
            (*cmd, *args, "--format", "md", "--json"),
        )
        for cmd, args in (
            (("diff",), ("latest", "latest")),
            (("readiness",), ("--job", "smoke.yaml", "--basis", "v1")),
            (("inventory", "audit"), ("--image", "host")),
            (("inventory", "diff"), ("a", "b")),
            (("inventory", "show"), ("1",)),
        )
    ),
)


def _flag(command: Any, param: str) -> str:
    for p in command.params:
        if p.name == param:
            return "/".join(o for o in p.opts if o.startswith("--")) or param
    raise KeyError(param)  # a rule naming a parameter the command does not have


def _check(ctx: Any, path: str, rules: tuple[Rule, ...]) -> None:
    for rule in rules:
        source = getattr(ctx.get_parameter_source(rule.param), "name", None)  # typer's own click
        if source not in ("COMMANDLINE", "ENVIRONMENT"):
            continue
        if not rule.inert(ctx.params):
            continue
        flag = _flag(ctx.command, rule.param)
        if source == "ENVIRONMENT":
            from .common import err

            var = next((p.envvar for p in ctx.command.params if p.name == rule.param), "")
            err.print(
                f"warning: {var} ({flag}) has no effect {rule.why}; it is ignored", markup=False
            )
            continue
        raise InputError(f"valorch {path}: {flag} has no effect {rule.why}", rule.hint)


def guard(command: Any, path: str = "") -> Any:
    """``command`` and everything under it check the table before they run."""
    if getattr(command, "_valorch_guard", False):
        return command
    command._valorch_guard = True
    rules = tuple(r for r in RULES if r.command == path)
    if rules:
        original = command.invoke

        def invoke(ctx: Any) -> Any:
            _check(ctx, path, rules)
            return original(ctx)

        command.invoke = invoke
    for name, sub in getattr(command, "commands", {}).items():
        guard(sub, f"{path} {name}".strip())
    return command
