"""The check registry: every check has a stable id, the feature (matrix row) it
evidences, its kind, the backend library it exercises and a version."""

from __future__ import annotations

import fnmatch
import sys
from collections import OrderedDict
from typing import Callable, Dict, List, Optional, Sequence, Tuple


class Check:
    __slots__ = (
        "bigger_is_better",
        "description",
        "feature",
        "fn",
        "id",
        "kind",
        "library",
        "limits",
        "needs",
        "nodes",
        "suite",
        "unit",
        "version",
    )

    def __init__(  # noqa: PLR0913 (one argument per field of a check's declaration)
        self,
        id,
        fn,
        feature,
        kind,
        suite,
        library=None,
        version=1,
        needs=(),
        description="",
        unit=None,
        bigger_is_better=False,
        nodes=1,
    ):
        self.id = id
        self.nodes = int(
            nodes
        )  # the fewest nodes it runs on: a multi-node check (one probe per node) says 2
        self.fn = fn
        self.feature = feature
        self.kind = kind
        self.suite = suite
        self.library = library
        self.version = version
        self.needs = tuple(needs)
        self.description = description
        self.unit = unit
        self.bigger_is_better = bigger_is_better
        self.limits = ""  # what a pass does not prove (the docstring's "Not proven:" paragraph)

    def info(self) -> dict:
        info = {
            "id": self.id,
            "feature": self.feature,
            "kind": self.kind,
            "suite": self.suite,
            "library": self.library,
            "version": self.version,
            "needs": list(self.needs),
            "description": self.description,
            "unit": self.unit,
            "bigger_is_better": self.bigger_is_better,
        }
        if self.nodes > 1:
            info["nodes"] = self.nodes
        return info


class Suite:
    __slots__ = ("checks", "description", "framework", "name")

    def __init__(self, name: str, framework: Optional[str], description: str):
        self.name = name
        self.framework = framework  # imported once per worker, before the first check
        self.description = description
        self.checks = []  # type: List[str]

    def info(self) -> dict:
        return {
            "name": self.name,
            "framework": self.framework,
            "description": self.description,
            "checks": list(self.checks),
        }


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


def load_suite(suite_name: str) -> None:
    """Register the checks of ``suite_name`` (the probe's run of one suite): only its modules
    when the check package is not imported yet and the suite is built in, else every module.
    The suite's checks register in the same order either way (each module registers in
    one suite only, and a suite's modules load in ``CHECK_MODULES`` order)."""
    global _first_import
    wanted = SUITE_MODULES.get(suite_name)
    if wanted is not None and __name__.rpartition(".")[0] + ".checks" not in sys.modules:
        _first_import = tuple(m for m in CHECK_MODULES if m in wanted)
    try:
        from . import checks  # noqa: F401 (importing the package registers the checks)
    finally:
        _first_import = None


def suite(name: str, framework: Optional[str], description: str) -> Suite:
    if name in SUITES:
        raise ValueError("suite %s declared twice" % name)
    SUITES[name] = Suite(name, framework, description)
    return SUITES[name]


def check(  # noqa: PLR0913 (one keyword per field of a check's declaration)
    id: str,
    feature: str,
    kind: str,
    suite: str,
    library: Optional[str] = None,
    version: int = 1,
    needs: Sequence[str] = (),
    unit: Optional[str] = None,
    bigger_is_better: bool = False,
    nodes: int = 1,
) -> Callable:
    """Register a check function ``fn(ctx)`` under a stable id."""

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
            library,
            version,
            needs,
            paragraphs[0] if paragraphs else "",
            unit,
            bigger_is_better,
            nodes,
        )
        CHECKS[id].limits = limits_of(paragraphs)
        SUITES[suite].checks.append(id)
        return fn

    return register


def limits_of(paragraphs: Sequence[str]) -> str:
    """The "Not proven: ..." paragraph of a check's docstring."""
    for p in paragraphs[1:]:
        if p.startswith("Not proven:"):
            return p[len("Not proven:") :].strip()
    return ""


def declare(suite_name: str, declaration: Optional[dict]) -> List[Check]:
    """Register the checks a job declares for a suite (command checks, a pytest
    workload) in this process, so that they run, crash and time out exactly as
    static checks do. Raises ValueError for a declaration the suite cannot take."""
    from . import checks  # noqa: F401 (importing the package registers every check)
    from .declared import build

    if suite_name not in SUITES:
        raise KeyError(suite_name)
    made = build(suite_name, declaration or {})
    for chk in made:
        if chk.id in CHECKS:
            raise ValueError("declared check %s is already registered" % chk.id)
    for chk in made:
        CHECKS[chk.id] = chk
        SUITES[suite_name].checks.append(chk.id)
    return made


def select(suite_name: str, patterns: Sequence[str] = ()) -> Tuple[Suite, List[Check]]:
    """The checks of a suite, in declaration order, filtered by glob patterns."""
    from . import checks  # noqa: F401 (importing the package registers every check)

    if suite_name not in SUITES:
        raise KeyError(suite_name)
    s = SUITES[suite_name]
    chosen = [
        CHECKS[c]
        for c in s.checks
        if not patterns or any(fnmatch.fnmatchcase(c, p) for p in patterns)
    ]
    return s, chosen


def catalog() -> dict:
    from . import checks  # noqa: F401 (importing the package registers every check)

    return {
        "suites": [s.info() for s in SUITES.values()],
        "checks": [dict(c.info(), limits=c.limits) for c in CHECKS.values()],
    }
