"""Domain objects: frozen pydantic models, no I/O.

Everything that crosses a boundary (YAML specs, probe output, stored rows) is
validated against one of these models; unknown keys are refused
(``extra="forbid"``) so that a typo in a spec is an error, not a silent default.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from . import plaintext
from .applies import Applies
from .bounds import (  # noqa: F401 (re-exported: the bounds of the vocabulary)
    EXIT_CODE_RANGE,
    MAX_GID,
    MAX_NAME,
    MAX_SECONDS,
    MAX_TEXT,
    VERSION_PATTERN,
)
from .statuses import FAILING, NOT_EXERCISED, STATUSES  # noqa: F401 (re-exported)

#: a check's version: a PostgreSQL INTEGER column, and what an export accepts (export_schema)
MAX_VERSION = 1_000_000
#: GPUs one host may have (an index past it is a typo, not a machine)
MAX_GPU_INDEX = 1023


class Backend(str, Enum):
    """The software stack an image is built for, and the GPU vendor it needs."""

    rocm = "rocm"
    cuda = "cuda"
    cpu = "cpu"

    @property
    def vendor(self) -> str | None:
        """``amd`` / ``nvidia`` (the GPU.vendor that can run it), None for CPU images."""
        return _VENDOR[self.value]

    @property
    def gpu(self) -> bool:
        return self is not Backend.cpu

    # a str mix-in prints as "Backend.rocm" in f-strings; the value is what people read
    def __str__(self) -> str:
        return self.value

    def __format__(self, format_spec: str) -> str:
        return str.__format__(self, format_spec)


_VENDOR = {"rocm": "amd", "cuda": "nvidia", "cpu": None}


def vendor_of(backend: str) -> str | None:
    """The GPU vendor of a backend name ("rocm" → "amd"); None for "cpu"."""
    return Backend(backend).vendor


Status = Literal[
    "pass", "partial", "fail", "crash", "timeout", "error", "unsupported", "skip", "n/a", "xfail"
]
CheckKind = Literal[
    "environment",
    "kernel",
    "feature",
    "compile",
    "profiler",
    "command",
    "pytest",
    "inventory",
    "selftest",
]
ExecutorName = Literal["host", "docker"]

#: the regression rule's default timing threshold: a 5 % slower median (docs/design.md, "Regression rule")
DEFAULT_THRESHOLD = 0.05


# The regression report's change kinds, most serious first (the order of its sections).
REGRESSED, SLOWER = "regressed", "slower"
NEW_FAILURE = "new_failure"  # a check the base did not have, failing in the head
FIXED, FASTER = "fixed", "faster"
NOISE = "noise"  # over the threshold, not significant: "~"
FLAKY, INCONCLUSIVE_CHANGE, EXPECTED = "flaky", "inconclusive", "expected"
COVERAGE_LOST, COVERAGE_GAINED = "coverage_lost", "coverage_gained"
NOT_COMPARABLE, CHANGED, SAME = "not_comparable", "changed", "same"
#: the change kinds that make a regression (exit 1)
COUNTED = (REGRESSED, NEW_FAILURE, SLOWER)
MARK = {
    REGRESSED: "❌",
    NEW_FAILURE: "❌",
    SLOWER: "▼",
    FIXED: "✅",
    FASTER: "▲",
    NOISE: "~",
    FLAKY: "⁇",
    INCONCLUSIVE_CHANGE: "⁇",
    EXPECTED: "⚑",
    COVERAGE_LOST: "−",
    COVERAGE_GAINED: "+",
    NOT_COMPARABLE: "x",
    CHANGED: "·",
    SAME: "",
}


@dataclass(frozen=True)
class Change:
    """One difference between two versions of a named thing, in one vocabulary for the
    image inventory diff (``subject`` is a component) and the catalog import (an image
    alias): ``kind`` is added | removed | changed | unchanged | kept. The regression report's
    cells are ``regression.rule.CellChange``, whose kinds are the change kinds above."""

    kind: str
    subject: str
    old: str | None = None
    new: str | None = None
    details: tuple[str, ...] = ()


# Output from a container is untrusted: every field is bounded.
MAX_MESSAGE = 4_000
MAX_LOG = 16_000
MAX_SAMPLES = 10_000
MAX_METRICS = 200


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class ImageSpec(Frozen):
    """One image of the catalog (or one derived from a tag that is not catalogued)."""

    alias: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    reference: str
    backend: Backend
    family: str = "cpu"
    digest: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")
    # the gfx / sm targets the image's binaries are built for; when given, placement
    # matches only GPUs of these archs (a gfx90a-only image never lands on gfx942)
    archs: tuple[str, ...] = ()
    os: str | None = None
    components: dict[str, str] = Field(default_factory=dict)
    # what a published table says of the image that is not a version (a flavour such as
    # "dev", a cell left unread): shown, never audited
    labels: dict[str, str] = Field(default_factory=dict)
    # Locally built images are never pulled; "host" runs the local interpreter.
    executor: ExecutorName = "docker"
    local: bool = False
    derived: bool = False
    notes: str = ""

    @field_validator("components", mode="before")
    @classmethod
    def _stringify(cls, value: Any) -> Any:
        # YAML reads 24.04 and 3.10 as floats; versions are strings. 3.10 would become "3.1"
        # through float; the catalog quotes such values, but be forgiving with ones that
        # survive (24.04 → "24.04").
        if isinstance(value, dict):
            return {str(k): repr(v) if isinstance(v, float) else str(v) for k, v in value.items()}
        return value


class GPU(Frozen):
    vendor: Literal["amd", "nvidia"]
    arch: str  # gfx942, gfx90a, sm_90 ...
    index: int = Field(ge=0, le=MAX_GPU_INDEX)
    render_minor: int | None = Field(default=None, ge=0, le=(1 << 20) - 1)  # renderD<minor> (AMD)
    product: str | None = None
    memory_mib: int | None = Field(default=None, ge=0, le=1 << 30)  # 1 PiB: none is larger
    uuid: str | None = None


class TLSSpec(Frozen):
    """Client certificates for a ``tcp://`` engine (paths on the orchestrator's machine)."""

    ca: str
    cert: str
    key: str
    verify: bool = True


#: a container memory size as docker takes it: 512m, 8g, 1.5g (k, m, g, t; bytes without a unit)
MEMORY_SIZE = r"^[0-9]{1,16}(\.[0-9]{1,6})?[kmgtKMGT]?$"
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
#: a container's memory limit, bounded: Docker reads 0 as "no limit" (and refuses less than
#: 6 MiB), and the probe's Python needs some 40 MiB; above 64 TiB no host exists
MIN_MEMORY, MAX_MEMORY = 64 << 20, 64 << 40
#: a container's CPUs, bounded: Docker's smallest quota is 0.01 CPU (1 ms of each 100 ms);
#: below it ``int(cpus * 1e9)`` nano-CPUs round to 0, which the engine reads as "no limit"
MIN_CPUS, MAX_CPUS = 0.01, 4096.0


def memory_bytes(text: str) -> int:
    """Bytes of a docker-style size (512m, 2g, 1.5G, 4096: bytes); ValueError when it is not
    one or lies outside [MIN_MEMORY, MAX_MEMORY]."""
    given = text.strip()
    if not re.fullmatch(MEMORY_SIZE[1:-1], given):
        raise ValueError(f"{text!r} is not a size (e.g. 512m, 8g, 1.5g)")
    unit = given[-1].lower() if given[-1].isalpha() else ""
    size = int(float(given[: len(given) - len(unit)]) * _UNITS[unit])
    if not MIN_MEMORY <= size <= MAX_MEMORY:
        raise ValueError(
            f"{text!r} is {size} bytes: a container's memory limit lies between 64m and 64t "
            "(0 would mean no limit at all)"
        )
    return size


def _checked_memory(value: str | None) -> str | None:
    if value is not None:
        memory_bytes(value)
    return value


#: where a field acts (applies.py): in a probe container, or on the local interpreter only
NO_CONTAINER = "no container starts"
IN_CONTAINER = Applies(("docker",), why=NO_CONTAINER)
ON_HOST = Applies(("host",), why="a container gets none of valorch's environment")


class HostSpec(Frozen):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    endpoint: str = "unix:///var/run/docker.sock"
    tls: TLSSpec | None = None
    labels: tuple[str, ...] = ()
    slots: int = Field(default=1, ge=1, le=4096)
    gpus: tuple[GPU, ...] = ()
    render_gid: int | None = Field(default=None, ge=0, le=MAX_GID)
    video_gid: int | None = Field(default=None, ge=0, le=MAX_GID)
    nvidia_runtime: Annotated[bool, IN_CONTAINER] = False
    kernel: str | None = None
    driver: str | None = None
    # per probe container on this host (executors/limits.py gives the defaults); not part of the fingerprint
    container_memory: Annotated[str | None, IN_CONTAINER] = Field(default=None, pattern=MEMORY_SIZE)
    container_cpus: Annotated[float | None, IN_CONTAINER] = Field(
        default=None, ge=MIN_CPUS, le=MAX_CPUS, allow_inf_nan=False
    )
    # the host's address on the network the nodes of a multi-node task talk over (the
    # rendezvous address when it is node 0); default: the engine endpoint's host, or
    # 127.0.0.1 for a local socket. Not part of the fingerprint.
    address: str | None = Field(
        default=None, max_length=255, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$"
    )
    # opt-in: the RDMA device nodes (/dev/infiniband/...) a multi-node GPU task's container gets
    # on this host, with CAP_IPC_LOCK and an unlimited memlock, as NCCL/RCCL need for
    # InfiniBand/RoCE (executors/container.RDMA_CAPS; the cost: docs/architecture.md). Not part
    # of the fingerprint.
    rdma: Annotated[tuple[str, ...], IN_CONTAINER] = Field(default=(), max_length=64)

    @field_validator("rdma")
    @classmethod
    def _rdma_devices(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for dev in value:
            if not re.fullmatch(r"/dev/infiniband/[A-Za-z0-9_.\-]+", dev):
                raise ValueError(
                    "rdma: %r is not an RDMA device node: list /dev/infiniband/NAME paths "
                    "(uverbs0, rdma_cm ...)" % dev[:80]
                )
        return value

    _memory = field_validator("container_memory")(_checked_memory)

    @property
    def net_address(self) -> str:
        """Where other nodes reach the host's containers (``address``, else the endpoint's host)."""
        if self.address:
            return self.address
        rest = self.endpoint.split("://", 1)[-1]
        if not self.endpoint.startswith(("unix://", "npipe://")):  # tcp://, ssh://, slurm://NODE
            hostport = rest.split("/", 1)[0].rsplit("@", 1)[-1]
            if hostport.startswith("["):
                return hostport[1 : hostport.find("]")]
            return hostport.rsplit(":", 1)[0] if hostport.count(":") == 1 else hostport
        return "127.0.0.1"

    def gpus_of(self, vendor: str) -> tuple[GPU, ...]:
        return tuple(g for g in self.gpus if g.vendor == vendor)

    @property
    def fingerprint(self) -> str:
        limits = {"container_memory", "container_cpus", "address", "rdma"}
        return short_hash(self.model_dump(mode="json", exclude=limits))


_DECLARED_ID = r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$"


#: the longest path the kernel takes, and the longest name of one of its components
PATH_MAX, NAME_MAX = 4096, 255


def executable_problem(argv: tuple[str, ...]) -> str | None:
    """Why ``argv`` cannot be executed as written (exec never sees a NUL, and ``argv[0]`` must
    name a program: a name looked up on PATH or a path to a file), else None."""
    for n, arg in enumerate(argv):
        if "\x00" in arg:
            return f"argv[{n}] holds a NUL character, which ends an argument for exec: remove it"
    prog = argv[0] if argv else ""
    if not prog.strip():
        return "argv[0] is empty: name the program to run (rocminfo, or /opt/rocm/bin/rocminfo)"
    if prog != prog.strip():
        return f"argv[0] {prog[:80]!r} begins or ends with white space: no shell strips it"
    if "/" not in prog and any(ch.isspace() for ch in prog):
        words = prog.split()
        shown = repr(words[:6])[:-1] + (", …]" if len(words) > 6 else "]")
        return f"argv[0] {prog[:80]!r} is not a program name: no shell splits it; write {shown}"
    if why := plaintext.problem(prog):
        return f"argv[0] {why.split(';')[0]}: not a program name"
    last = prog.rstrip("/").rsplit("/", 1)[-1]
    if prog.endswith("/") or last in (".", ".."):
        return f"argv[0] {prog[:80]!r} names a directory, not a program"
    if len(prog.encode()) > PATH_MAX or any(len(p.encode()) > NAME_MAX for p in prog.split("/")):
        return f"argv[0] is longer than a path can be ({PATH_MAX} bytes, {NAME_MAX} per name)"
    return None


class CommandSpec(Frozen):
    """A command check declared in a job spec: ``command.<id>`` runs ``argv`` (a list,
    never a shell string) and compares its exit code and output with regexes."""

    id: str = Field(min_length=1, max_length=120, pattern=_DECLARED_ID)
    argv: tuple[str, ...] = Field(min_length=1)
    exit_code: int = Field(default=0, ge=EXIT_CODE_RANGE[0], le=EXIT_CODE_RANGE[1])
    stdout: tuple[str, ...] = ()  # regexes that must all match (re.search, MULTILINE)
    stderr: tuple[str, ...] = ()
    stdout_not: tuple[str, ...] = ()  # regexes that must not match
    stderr_not: tuple[str, ...] = ()
    feature: str | None = Field(default=None, max_length=300)
    timeout: float = Field(default=60.0, gt=0, le=24 * 3600, allow_inf_nan=False)
    version: int = Field(default=1, ge=1, le=MAX_VERSION)

    @field_validator("argv", mode="before")
    @classmethod
    def _argv_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            if len(value.split()) > 1:
                raise ValueError(
                    "argv must be a list of strings, not a shell string: write "
                    f"{list(value.split())!r} (no shell runs it: no pipes, globs or $VARS)"
                )
            return [value]
        return value

    @field_validator("argv")
    @classmethod
    def _executable(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if why := executable_problem(value):
            raise ValueError(why)
        return value

    @field_validator("stdout", "stderr", "stdout_not", "stderr_not", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("stdout", "stderr", "stdout_not", "stderr_not")
    @classmethod
    def _regexes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"regular expression {pattern!r} does not compile: {exc}"
                ) from None
        return value


class PytestSpec(Frozen):
    """A pytest workload: a test file or directory shipped with the job (``path``
    relative to the job file) or already in the image (``in_image: true``, absolute)."""

    path: str = Field(min_length=1)
    in_image: bool = False
    args: tuple[str, ...] = ()
    timeout: float = Field(default=600.0, gt=0, le=24 * 3600, allow_inf_nan=False)
    feature: str | None = Field(default=None, max_length=300)
    max_tests: int = Field(default=5000, ge=1, le=15000)
    # Set by catalog.load_job: the absolute path on this machine of what is shipped.
    source: str | None = None

    @model_validator(mode="after")
    def _where(self) -> PytestSpec:
        absolute = self.path.startswith("/")
        if self.in_image and not absolute:
            raise ValueError(
                f"path {self.path!r}: with in_image: true the path must be absolute inside the image"
            )
        if not self.in_image and absolute:
            raise ValueError(
                f"path {self.path!r} is absolute: give a path relative to the job file (it is "
                "shipped into the container), or set in_image: true for a path inside the image"
            )
        return self

    @property
    def shipped_name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    def probe_path(self) -> str:
        """The path the probe runs, relative to its working directory when shipped."""
        return self.path if self.in_image else f"workloads/{self.shipped_name}"


#: a tier's time budget per image (seconds), as ROCm's TheRock tiers its test suites
TIER_BUDGETS = {"smoke": 5 * 60.0, "nightly": 30 * 60.0, "full": 2 * 3600.0}


class SuiteRef(Frozen):
    """A suite as a job asks for it."""

    name: StoredName
    checks: tuple[str, ...] = ()  # glob filters on check ids; empty = all
    # bounded: a run always has a deadline (an infinite or 1e300 s one would overflow the timer)
    deadline: float = Field(
        default=120.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False, description="seconds per check"
    )
    timeout: float | None = Field(
        default=None,
        gt=0,
        le=MAX_SECONDS,
        allow_inf_nan=False,
        description="seconds for the whole container",
    )
    attempts: int = Field(default=1, ge=1, le=10)
    network: Annotated[
        bool, Applies(("docker",), why="a workload there always has this machine's network")
    ] = False
    memory: Annotated[str | None, IN_CONTAINER] = Field(
        default=None, pattern=MEMORY_SIZE, description="the container's memory limit"
    )
    cpus: Annotated[float | None, IN_CONTAINER] = Field(
        default=None,
        ge=MIN_CPUS,
        le=MAX_CPUS,
        allow_inf_nan=False,
        description="the container's CPU limit",
    )
    commands: tuple[CommandSpec, ...] = ()  # suite "command" only
    pytest: PytestSpec | None = None  # suite "pytest" only
    # suite "profiler" only, opt-in: its GPU containers get CAP_SYS_ADMIN (ncu's performance
    # counters where the driver keeps them to admin users: executors/container.PROFILING_CAPS)
    profiling_caps: Annotated[
        bool, Applies(("docker",), why="the profiler has what the user running valorch has")
    ] = False
    # variables of valorch's environment passed to a workload run by the local interpreter
    # (--image host), beyond the allow-list of executors/hostenv.py; a container gets none
    pass_env: Annotated[tuple[str, ...], ON_HOST] = Field(default=(), max_length=100)
    # a task spanning several nodes: gang-placed on that many hosts, one probe per node
    nodes: int = Field(default=1, ge=1, le=1024, description="nodes the task spans (gang-placed)")
    gpus_per_node: int | None = Field(
        default=None, ge=1, le=64, description="GPUs the task takes on each node"
    )
    # a time budget per image: the tier's default (TIER_BUDGETS) or its own (90s, 5m, 2h); the
    # planner warns before running when the suite's stored duration exceeds it
    tier: Literal["smoke", "nightly", "full"] | None = None
    budget: float | None = Field(default=None, gt=0, le=MAX_SECONDS, description="seconds")

    @field_validator("budget", mode="before")
    @classmethod
    def _budget(cls, value: Any) -> Any:
        if isinstance(value, str):
            m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh])\s*", value)
            if not m:
                raise ValueError(f"budget {value!r}: write seconds or a duration (90s, 5m, 2h)")
            return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600}[m.group(2)]
        return value

    @property
    def time_budget(self) -> float | None:
        """Seconds per image: the suite's own budget, else its tier's, else none."""
        return self.budget if self.budget is not None else TIER_BUDGETS.get(self.tier or "")

    _memory = field_validator("memory")(_checked_memory)

    @field_validator("pass_env")
    @classmethod
    def _names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", name):
                raise ValueError(f"{name[:130]!r} is not an environment variable name")
        return value

    @model_validator(mode="after")
    def _declared(self) -> SuiteRef:
        if self.profiling_caps and self.name != "profiler":
            raise ValueError(
                f"'profiling_caps' belongs to the suite named profiler, not {self.name!r}"
            )
        if self.commands and self.name != "command":
            raise ValueError(f"'commands' belongs to a suite named command, not {self.name!r}")
        if self.pytest is not None and self.name != "pytest":
            raise ValueError(f"'pytest' belongs to a suite named pytest, not {self.name!r}")
        ids = [c.id for c in self.commands]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"command ids must be unique; repeated: {', '.join(dupes)}")
        return self

    def declaration(self) -> dict[str, Any] | None:
        """What the probe gets with ``--declare``: the checks declared by the job (or None)."""
        if self.commands:
            return {"commands": [c.model_dump(mode="json") for c in self.commands]}
        if self.pytest is not None:
            p = self.pytest
            given = p.model_dump(mode="json", include={"args", "timeout", "max_tests"})
            feature = p.feature or f"pytest {p.path}"
            return {"pytest": {"path": p.probe_path(), "feature": feature, **given}}
        return None

    def declared_timeout(self) -> float:
        """The longest timeout of a declared check (0 when nothing is declared)."""
        times = [c.timeout for c in self.commands] + ([self.pytest.timeout] if self.pytest else [])
        return max(times, default=0.0)


def _paragraph(value: str) -> str:
    if why := plaintext.problem(value, lines=True):
        raise ValueError(why)
    return value


#: a name valorch stores and shows, held to the rule a results import holds it to
#: (``plaintext.problem``): what a job spec gives, its export brings back
StoredName = Annotated[
    str, Field(min_length=1, max_length=MAX_NAME), AfterValidator(plaintext.checked)
]
#: the most labels a job has: they are kept in each run's meta, which an export bounds
MAX_LABELS = 16


class JobSpec(Frozen):
    name: StoredName
    description: Annotated[str, Field(max_length=MAX_TEXT), AfterValidator(_paragraph)] = ""
    images: tuple[str, ...] = Field(min_length=1)
    suites: tuple[SuiteRef, ...] = Field(min_length=1)
    labels: tuple[StoredName, ...] = Field(default=(), max_length=MAX_LABELS)

    @field_validator("suites", mode="before")
    @classmethod
    def _suite_shorthand(cls, value: Any) -> Any:
        # "smoke" is shorthand for {name: smoke}
        if isinstance(value, (list, tuple)):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @property
    def spec_hash(self) -> str:
        dump = self.model_dump(mode="json")
        for suite in dump["suites"]:  # limits added later: unset, they leave the hash as it was
            for key in ("memory", "cpus", "gpus_per_node", "tier", "budget"):
                if suite.get(key) is None:
                    suite.pop(key, None)
            for key in ("profiling_caps", "pass_env"):  # added later too
                if not suite.get(key):
                    suite.pop(key, None)
            if suite.get("nodes") == 1:
                suite.pop("nodes", None)
        return short_hash(dump)


class CheckInfo(Frozen):
    """What a check is: id, the feature it evidences, the library it exercises."""

    id: str
    feature: str
    kind: CheckKind
    version: int = Field(default=1, ge=0, le=MAX_VERSION)
    library: str | None = None
    suite: str = ""
    description: str = ""
    unit: str | None = None
    bigger_is_better: bool = False
    needs: tuple[str, ...] = ()
    nodes: int = Field(default=1, ge=1, le=1024)  # the fewest nodes it runs on (multi-node: 2)


def definition_hash(info: CheckInfo, suite: SuiteRef) -> str:
    """A short hash of what a check is, as this task runs it: its id, version, kind and
    needs, and, for a check a job declares, its declaration (a command's argv, expected exit
    code and output regexes, timeout; a pytest workload's path and arguments). Stored with
    each result: two results of one check id whose hashes differ measured different things
    (triage says "definition changed", never "flaky")."""
    declared: Any = None
    if info.id.startswith("command."):
        name = info.id.removeprefix("command.").split("[")[0]
        found = [c for c in suite.commands if c.id == name]
        declared = found[0].model_dump(mode="json", exclude={"feature"}) if found else None
    elif suite.pytest is not None and info.kind == "pytest":
        declared = suite.pytest.model_dump(mode="json", exclude={"source"})
    return short_hash(
        {
            "id": info.id,
            "version": info.version,
            "kind": info.kind,
            "needs": list(info.needs),
            "nodes": info.nodes,
            "declared": declared,
        }
    )


def declared_hash(suite: SuiteRef) -> str | None:
    """The hash of what a suite declares (its commands or pytest workload), None when it
    declares nothing: the definition of the checks a workload reports that no CheckInfo names
    (one per upstream pytest test)."""
    declaration = suite.declaration()
    if declaration is None:
        return None
    return short_hash(declaration)


def short_hash(obj: Any) -> str:
    """16 hex digits of the SHA-256 of ``obj`` as JSON with sorted keys."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def tampered(metrics: dict[str, Any] | None) -> bool:
    """A result's metrics say its check's results were tampered with or cut at the output cap
    (the ``error`` executors/transcript.py writes in their place)."""
    return bool((metrics or {}).get("tampered") or (metrics or {}).get("output_capped"))


class CheckResult(Frozen):
    """One attempt of one check, as reported by the probe (validated, bounded)."""

    check: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:\-\[\]/]+$")
    status: Status
    feature: str = Field(default="", max_length=300)
    kind: CheckKind = "feature"
    version: int = Field(default=1, ge=0, le=MAX_VERSION)
    # The library evidence showed ran (GPU kernel names, the CPU library), not the
    # check's declared label (CheckInfo.library); None when nothing was proven.
    library: str | None = Field(default=None, max_length=200)
    # where it ran: "cpu", "cuda:0 NVIDIA H100 … sm_90"
    device: str | None = Field(default=None, max_length=200)
    attempt: int = Field(default=1, ge=1, le=1_000)
    duration_s: float = Field(default=0.0, ge=0, le=1e7, allow_inf_nan=False)
    message: str = ""
    log: str = ""
    unit: str | None = Field(default=None, max_length=40)
    bigger_is_better: bool = False
    metrics: dict[str, float | int | str | bool | None] = Field(default_factory=dict)
    samples: tuple[float, ...] = ()

    @field_validator("message", mode="before")
    @classmethod
    def _cap_message(cls, v: Any) -> Any:
        return v[:MAX_MESSAGE] if isinstance(v, str) else v

    @field_validator("log", mode="before")
    @classmethod
    def _cap_log(cls, v: Any) -> Any:
        # keep the tail: that is where the cause of a crash is
        return v[-MAX_LOG:] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _bounded(self) -> CheckResult:
        if len(self.samples) > MAX_SAMPLES:
            raise ValueError(f"too many samples ({len(self.samples)} > {MAX_SAMPLES})")
        if len(self.metrics) > MAX_METRICS:
            raise ValueError(f"too many metrics ({len(self.metrics)} > {MAX_METRICS})")
        for key, val in self.metrics.items():
            if len(key) > 100 or (isinstance(val, str) and len(val) > 2_000):
                raise ValueError(f"metric {key[:100]!r} too large")
        return self


class Task(Frozen):
    """One (image, suite) pair placed on a host."""

    image: ImageSpec
    suite: SuiteRef
    host: HostSpec
    checks: tuple[CheckInfo, ...]
    cpu_only: bool = False
    gpus: tuple[GPU, ...] | None = None  # the GPUs it is pinned to (None: all of the backend's)
    # a multi-node task: every node's host in node-rank order (``host`` is node 0) and the
    # GPUs it holds on each; empty for a task on one host
    nodes: tuple[HostSpec, ...] = ()
    node_gpus: tuple[tuple[GPU, ...], ...] = ()

    @property
    def node_count(self) -> int:
        return max(1, len(self.nodes))

    @property
    def multinode_gpu(self) -> bool:
        """A gang of several nodes on their GPUs: what RDMA (NCCL/RCCL over InfiniBand or
        RoCE) is for, and the only task any executor's RDMA opt-in gives it to."""
        return bool(self.nodes) and not self.cpu_only and self.image.backend.gpu


class Execution(Frozen):
    """What an executor brings back from running one task."""

    results: tuple[CheckResult, ...]
    meta: dict[str, Any] = Field(default_factory=dict)
    timings: dict[str, float] = Field(default_factory=dict)
    image_digest: str | None = None
    # what the engine or the OS reports: a status, a negative signal, a Windows code
    exit_code: int | None = Field(default=None, ge=-(1 << 31), le=(1 << 32) - 1)
    infra_error: str | None = None
    # the engine's image id (config digest); equal to image_digest when no registry served the
    # image (built or loaded, never pushed): no manifest digest, so nothing an attestation names
    image_id: str | None = None


@dataclass(frozen=True)
class BatchInfo:
    """A batch as its rows name it: its id, its job, the job's spec hash and labels."""

    batch: str
    job: str
    spec_hash: str
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Pending:
    """A task of a stored batch that still has to run: its task row and the run it is in."""

    task: Task
    task_id: int
    run_id: str
    executor: str
