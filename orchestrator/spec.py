"""Domain objects: frozen pydantic models, no I/O.

Everything that crosses a boundary (YAML specs, probe output, stored rows) is
validated against one of these models; unknown keys are refused
(``extra="forbid"``) so that a typo in a spec is an error, not a silent default.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Backend = Literal["rocm", "cuda", "cpu"]
Status = Literal["pass", "fail", "crash", "timeout", "error", "unsupported", "skip", "xfail"]
CheckKind = Literal["environment", "kernel", "feature", "compile", "profiler", "command", "pytest", "inventory", "selftest"]
ExecutorName = Literal["host", "docker"]

STATUSES: tuple[str, ...] = ("pass", "fail", "crash", "timeout", "error", "unsupported", "skip", "xfail")
FAILING: frozenset[str] = frozenset({"fail", "crash", "timeout"})

# Output from a container is untrusted: every field is bounded.
MAX_MESSAGE = 4_000
MAX_LOG = 16_000
MAX_SAMPLES = 10_000
MAX_METRICS = 200


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ImageSpec(Frozen):
    """One image of the catalog (or one derived from a tag that is not catalogued)."""

    alias: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    reference: str
    backend: Backend
    family: str = "cpu"
    digest: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")
    os: str | None = None
    components: dict[str, str] = Field(default_factory=dict)
    # Locally built images are never pulled; "host" runs the local interpreter.
    executor: ExecutorName = "docker"
    local: bool = False
    derived: bool = False
    notes: str = ""

    @field_validator("components", mode="before")
    @classmethod
    def _stringify(cls, value: Any) -> Any:
        # YAML reads 24.04 and 3.10 as floats; versions are strings.
        if isinstance(value, dict):
            return {str(k): _version_text(v) for k, v in value.items()}
        return value


def _version_text(value: Any) -> str:
    if isinstance(value, float):
        # 3.10 would become "3.1" through float; the catalog quotes such values,
        # but be forgiving with ones that survive (24.04 → "24.04").
        return repr(value)
    return str(value)


class GPU(Frozen):
    vendor: Literal["amd", "nvidia"]
    arch: str  # gfx942, gfx90a, sm_90 ...
    index: int
    render_minor: int | None = None  # /dev/dri/renderD<minor> (AMD)
    product: str | None = None
    memory_mib: int | None = None
    uuid: str | None = None


class TLSSpec(Frozen):
    """Client certificates for a ``tcp://`` engine (paths on the orchestrator's machine)."""

    ca: str
    cert: str
    key: str
    verify: bool = True


class HostSpec(Frozen):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    endpoint: str = "unix:///var/run/docker.sock"
    tls: TLSSpec | None = None
    labels: tuple[str, ...] = ()
    slots: int = Field(default=1, ge=1)
    gpus: tuple[GPU, ...] = ()
    render_gid: int | None = None
    video_gid: int | None = None
    nvidia_runtime: bool = False
    kernel: str | None = None
    driver: str | None = None

    def gpus_of(self, vendor: str) -> tuple[GPU, ...]:
        return tuple(g for g in self.gpus if g.vendor == vendor)

    @property
    def fingerprint(self) -> str:
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


class SuiteRef(Frozen):
    """A suite as a job asks for it."""

    name: str
    checks: tuple[str, ...] = ()  # glob filters on check ids; empty = all
    deadline: float = Field(default=120.0, gt=0, description="seconds per check")
    timeout: float | None = Field(default=None, gt=0, description="seconds for the whole container")
    attempts: int = Field(default=1, ge=1, le=10)
    network: bool = False


class JobSpec(Frozen):
    name: str
    description: str = ""
    images: tuple[str, ...] = Field(min_length=1)
    suites: tuple[SuiteRef, ...] = Field(min_length=1)
    labels: tuple[str, ...] = ()

    @field_validator("suites", mode="before")
    @classmethod
    def _suite_shorthand(cls, value: Any) -> Any:
        # "smoke" is shorthand for {name: smoke}
        if isinstance(value, (list, tuple)):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @property
    def spec_hash(self) -> str:
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


class CheckInfo(Frozen):
    """What a check is: id, the feature it evidences, the library it exercises."""

    id: str
    feature: str
    kind: CheckKind
    version: int = 1
    library: str | None = None
    suite: str = ""
    description: str = ""
    unit: str | None = None
    bigger_is_better: bool = False
    needs: tuple[str, ...] = ()


class CheckResult(Frozen):
    """One attempt of one check, as reported by the probe (validated, bounded)."""

    check: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:\-\[\]/]+$")
    status: Status
    feature: str = Field(default="", max_length=300)
    kind: CheckKind = "feature"
    version: int = Field(default=1, ge=0)
    library: str | None = Field(default=None, max_length=200)
    attempt: int = Field(default=1, ge=1)
    duration_s: float = Field(default=0.0, ge=0)
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
    def _bounded(self) -> "CheckResult":
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
    gpus: tuple[GPU, ...] | None = None  # the GPUs this task is pinned to (None: all of the backend's)


class Execution(Frozen):
    """What an executor brings back from running one task."""

    results: tuple[CheckResult, ...]
    meta: dict[str, Any] = Field(default_factory=dict)
    timings: dict[str, float] = Field(default_factory=dict)
    image_digest: str | None = None
    exit_code: int | None = None
    infra_error: str | None = None
