"""The check registry: every check has a stable id, the feature (matrix row) it
evidences, its kind, the backend library it exercises and a version.

The check modules import this module to register; loading them (a suite, every suite, a
job's declared checks) is ``loader``'s, so that the registry imports no check module."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

_NOT_INFO = ("fn", "nodes", "limits")  # a check's fields its info() leaves out


@dataclass
class Check:
    id: str
    fn: Callable
    feature: str
    kind: str
    suite: str
    library: Optional[str] = None
    version: int = 1
    needs: Tuple[str, ...] = ()
    description: str = ""
    unit: Optional[str] = None
    bigger_is_better: bool = False
    nodes: int = 1  # the fewest nodes it runs on: a multi-node check says 2
    limits: str = ""  # what a pass does not prove (the docstring's "Not proven:")

    def __post_init__(self) -> None:
        self.nodes = int(self.nodes)
        self.needs = tuple(self.needs)

    def info(self) -> dict:
        info = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NOT_INFO}
        info["needs"] = list(self.needs)
        if self.nodes > 1:
            info["nodes"] = self.nodes
        return info


@dataclass
class Suite:
    name: str
    framework: Optional[str]  # imported once per worker, before the first check
    description: str
    checks: List[str] = field(default_factory=list)


SUITES: Dict[str, Suite] = OrderedDict()
CHECKS: Dict[str, Check] = OrderedDict()

#: The modules that declare each suite or register one of its checks (with what they import,
#: nothing else a suite needs; tests/unit/test_probe_suite_modules.py keeps this true).
SUITE_MODULES: Dict[str, Tuple[str, ...]] = {
    "smoke": ("smoke",),
    "selftest": ("selftest",),
    "kernels": ("kernels", "kernels_dist"),
    "features": (
        "features",
        "features_dtypes",
        "features_cuda",
        "features_gpu_rows",
        "features_backends",
        "features_ecosystem",
        "features_domains",
        "features_rocm_libs",
    ),
    "compile": ("compile",),
    "profiler": ("profiler", "profiler_tools"),
    "tensorflow": ("tensorflow",),
    "command": ("command",),
    "pytest": ("pytest_workload",),
    "multinode": ("multinode",),
}
#: The modules of ``valorch_probe.checks``, in the order they register (``checks/__init__``):
#: the suites' modules, in the order above.
CHECK_MODULES: Tuple[str, ...] = tuple(
    OrderedDict.fromkeys(m for modules in SUITE_MODULES.values() for m in modules)
)
_first_import: Optional[Tuple[str, ...]] = None  # what ``checks`` imports when first imported


def modules_to_import() -> Tuple[str, ...]:
    """The check modules ``valorch_probe.checks`` imports: every one, unless ``load_suite``
    asked for one suite's."""
    return CHECK_MODULES if _first_import is None else _first_import


def suite(name: str, framework: Optional[str], description: str) -> Suite:
    if name in SUITES:
        raise ValueError("suite %s declared twice" % name)
    SUITES[name] = Suite(name, framework, description)
    return SUITES[name]


def check(id: str, feature: str, kind: str, suite: str, **fields: Any) -> Callable:
    """Register a check function ``fn(ctx)`` under a stable id; ``fields``: library, version,
    needs, unit, bigger_is_better, nodes (``Check``'s keywords)."""

    def register(fn: Callable) -> Callable:
        if id in CHECKS:
            raise ValueError("check %s registered twice" % id)
        if suite not in SUITES:
            raise ValueError("check %s names unknown suite %s" % (id, suite))
        paragraphs = [" ".join(p.split()) for p in (fn.__doc__ or "").strip().split("\n\n")]
        CHECKS[id] = Check(
            id,
            fn,
            feature,
            kind,
            suite,
            description=paragraphs[0],
            limits=limits_of(paragraphs),
            **fields,
        )
        SUITES[suite].checks.append(id)
        return fn

    return register


def checks_of(kind: str, suite: str, **defaults: Any) -> Callable[..., Callable]:
    """``check`` with the kind, suite and keyword defaults a module's checks share:
    ``gpu_feature = checks_of("feature", "features", needs=("gpu",))``."""

    def declare(id: str, feature: str, **fields: Any) -> Callable:
        return check(id, feature, kind, suite, **dict(defaults, **fields))

    return declare


def limits_of(paragraphs: Sequence[str]) -> str:
    for p in paragraphs[1:]:
        if p.startswith("Not proven:"):
            return p[len("Not proven:") :].strip()
    return ""


#: What a check a job declares says of itself (suites ``command`` and ``pytest``): the key
#: of the declaration it takes, and its fields filled from one declared entry (``%(key)s``,
#: with ``defaults``), the entry's own ``feature`` first. The probe builds declared checks
#: with it (``declared_fields``) and the orchestrator plans with the same table, which the
#: manifest carries (``declared``): the host never imports the probe to describe them.
DECLARED = {
    "command": {
        "takes": "commands",
        "defaults": {"exit_code": 0, "version": 1},
        "check": {
            "id": "command.%(id)s",
            "feature": "%(id)s",
            "kind": "command",
            "version": "%(version)s",
            "description": "runs %(argv)s; expects exit code %(exit_code)s",
        },
    },
    "pytest": {
        "takes": "pytest",
        "defaults": {},
        "check": {
            "id": "pytest.run",
            "feature": "pytest %(path)s",
            "kind": "pytest",
            "description": "runs pytest on %(path)s; each test case becomes a result",
        },
    },
}  # type: Dict[str, Dict[str, Any]]


def declared_fields(suite_name: str, entry: Dict[str, Any]) -> Dict[str, Any]:
    shape = DECLARED[suite_name]
    values = dict(shape["defaults"], **entry)
    fields = {k: v % values for k, v in shape["check"].items()}
    fields["feature"] = entry.get("feature") or fields["feature"]
    fields["version"] = int(fields.get("version", 1))
    return fields
