"""The results export document (``valorch results export``), as strict models.

An export comes from another machine: it is untrusted input, validated as strictly as a
probe's output before a single row is written. Every key is known (no extras), every
type exact (no "1" for 1), strings bounded, statuses and states from the vocabulary,
timestamps ISO 8601, and every reference (a result's run and check, a run's image and
host) resolves inside the document. A problem is named by its place
(``results[3].status``) and the document is refused as a whole.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from .. import plaintext
from ..bounds import EPOCH_ISO, FUTURE_SKEW_S, MAX_NAME
from ..spec import MAX_LOG, MAX_MESSAGE, MAX_METRICS, MAX_SAMPLES, CheckKind, Status
from . import blobs

RunState = Literal["running", "done", "failed", "interrupted"]
TaskState = Literal["queued", "running", "done", "error"]
Executor = Literal["host", "docker", "slurm", "kubernetes"]
Backend = Literal["rocm", "cuda", "cpu"]

#: a run or batch id (a uuid4 when valorch made it): 1 to 36 of A-Z a-z 0-9 _ . : -
Uuid = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,35}$")]
#: one line of printable text (no control character)
Plain = AfterValidator(plaintext.checked)
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME), Plain]
Number = StrictInt | StrictFloat
#: JSON objects kept as they are (a host spec, run meta, timings): bounded by their encoded size
MAX_BLOB = 64_000
#: a content digest, ``algorithm:hex`` (the OCI image spec's registered algorithms)
Digest = Annotated[str, Field(pattern=r"^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$")]
#: an image alias (spec.ImageSpec's) and a host name (spec.HostSpec's)
Alias = Annotated[
    str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
]
#: a version as packaging writes one (PEP 440, with a local part)
Version = Annotated[str, Field(pattern=r"^[0-9A-Za-z][0-9A-Za-z.+!_\-]{0,39}$")]
#: spec.JobSpec.spec_hash (16 lower-case hex digits when valorch made it): one word
SpecHash = Annotated[str, Field(pattern=r"^[0-9A-Za-z_.\-]{1,64}$")]
#: the built-in image a run on this machine's own interpreter names (catalog/core.py)
HOST = "host"


def _reference(value: str) -> str:
    """``host`` (the built-in image) or a reference by the OCI grammar (imageref.parse)."""
    from ..errors import InputError
    from ..imageref import parse

    if value != HOST:
        try:
            parse(value)
        except InputError as exc:
            raise ValueError(exc.message) from None
    return value


Reference = Annotated[str, Field(min_length=1, max_length=500), AfterValidator(_reference)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)


def _when(value: Any) -> Any:
    """An ISO 8601 timestamp (str) or None, kept as text: in UTC (an offset converted, not
    dropped), as the store keeps it (naive ISO 8601), refused outside [EPOCH, now +
    FUTURE_SKEW_S]."""
    from datetime import timedelta, timezone

    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 40:
        raise ValueError("must be an ISO 8601 timestamp (YYYY-MM-DDTHH:MM:SS) or null")
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 timestamp (YYYY-MM-DDTHH:MM:SS)") from None
    try:
        if when.tzinfo is not None:
            when = when.astimezone(timezone.utc).replace(tzinfo=None)
    except OverflowError:
        raise ValueError(f"{value!r} lies outside the range of dates") from None
    latest = datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(seconds=FUTURE_SKEW_S)
    if when < datetime.fromisoformat(EPOCH_ISO) or when > latest:
        raise ValueError(
            f"{value!r} is not a time a run can have (after {EPOCH_ISO[:10]}, not in the future)"
        )
    return when.isoformat()


def _ordered(started: str | None, ended: str | None, what: str) -> None:
    """``ended`` is not before ``started`` (both UTC text from ``_when``)."""
    if started and ended and datetime.fromisoformat(ended) < datetime.fromisoformat(started):
        raise ValueError(f"{what} ended ({ended}) before it started ({started})")


def _blob(value: Any) -> Any:
    import json

    try:
        size = len(json.dumps(value, allow_nan=False))
    except ValueError:
        raise ValueError("holds a number that is not finite (NaN or infinity)") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if size > MAX_BLOB:
        raise ValueError(f"larger than {MAX_BLOB} bytes")
    return value


def _shaped(check: Any) -> AfterValidator:
    """A blob that is also what ``check`` (store/blobs.py) finds no problem with: the model
    the store's readers read it as."""

    def validate(value: Any) -> Any:
        found = check(value, "")
        if found:
            raise ValueError("; ".join(p.lstrip(".") for p in found))
        return value

    return AfterValidator(validate)


#: a JSON object of at most MAX_BLOB bytes (meta, specs, extras)
Blob = Annotated[dict[str, Any], AfterValidator(_blob)]
RunMeta = Annotated[dict[str, Any], AfterValidator(_blob), _shaped(blobs.run_meta)]
SuiteSpec = Annotated[dict[str, Any], AfterValidator(_blob), _shaped(blobs.suite_spec)]
HostSpecBlob = Annotated[dict[str, Any], AfterValidator(_blob), _shaped(blobs.host_spec)]

#: an ISO 8601 timestamp kept as text (None where the key allows it)
When = Annotated[str, BeforeValidator(_when)]
OptWhen = Annotated[str | None, BeforeValidator(_when)]


class ExportImage(_Strict):
    alias: Alias
    reference: Reference
    digest: Digest | None = None
    backend: Backend
    family: Annotated[str, Field(max_length=50), Plain] = ""
    components: dict[
        Annotated[str, Field(max_length=100), Plain], Annotated[str, Field(max_length=500), Plain]
    ] = {}

    @model_validator(mode="after")
    def _builtin(self) -> ExportImage:
        """``host`` is the built-in image (this machine's interpreter): an imported image
        takes that alias only as the built-in image itself, never another reference."""
        if (self.alias == HOST) != (self.reference == HOST) or (
            self.alias == HOST and self.digest is not None
        ):
            raise ValueError(
                f"alias {self.alias!r} with reference {self.reference!r}: {HOST!r} is the "
                "built-in image (a run on this machine's interpreter); no other image takes it"
            )
        return self


class ExportHost(_Strict):
    name: Alias
    fingerprint: Annotated[str, Field(pattern=r"^[0-9a-f]{1,64}$")]
    spec: HostSpecBlob

    @model_validator(mode="after")
    def _named(self) -> ExportHost:
        if self.spec.get("name") != self.name:
            raise ValueError(f"spec.name {self.spec.get('name')!r} is not the host's {self.name!r}")
        return self


class ExportCheck(_Strict):
    check_id: Annotated[
        str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:\-\[\]/]+$")
    ]
    version: Annotated[StrictInt, Field(ge=0, le=1_000_000)]
    feature: Annotated[str, Field(max_length=300), Plain] = ""
    kind: CheckKind = "feature"
    library: Annotated[str, Field(max_length=200), Plain] | None = None
    unit: Annotated[str, Field(max_length=40), Plain] | None = None
    bigger_is_better: StrictBool = False


class ExportRun(_Strict):
    id: Uuid
    batch: Uuid
    job: Name
    # (reference, digest, alias) of one of "images"; a JSON list (strict mode wants a tuple)
    image: Annotated[
        tuple[
            Annotated[str, Field(strict=True)],
            Annotated[str, Field(strict=True)] | None,
            Annotated[str, Field(strict=True)],
        ],
        Field(strict=False),
    ]
    host: str  # the fingerprint of one of "hosts"
    executor: Executor
    valorch_version: Version
    spec_hash: SpecHash
    cpu_only: StrictBool
    started: When
    ended: OptWhen = None
    state: RunState
    meta: RunMeta = {}

    @model_validator(mode="after")
    def _in_order(self) -> ExportRun:
        _ordered(self.started, self.ended, "the run")
        return self


class ExportTask(_Strict):
    run: Uuid
    suite: Annotated[str, Field(min_length=1, max_length=100), Plain]
    suite_spec: SuiteSpec
    state: TaskState
    tries: Annotated[StrictInt, Field(ge=0, le=1_000)] = 0
    started: OptWhen = None
    ended: OptWhen = None
    timings: dict[Annotated[str, Field(max_length=100)], Number] = {}
    error: Annotated[str, Field(max_length=MAX_LOG)] | None = None

    @field_validator("timings")
    @classmethod
    def _finite_timings(cls, v: dict[str, float]) -> dict[str, float]:
        bad = [k for k, x in v.items() if not math.isfinite(x)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not a finite number of seconds")
        return v

    @model_validator(mode="after")
    def _its_suite(self) -> ExportTask:
        if self.suite_spec.get("name") != self.suite:
            raise ValueError(
                f"suite_spec.name {self.suite_spec.get('name')!r} is not the task's suite "
                f"{self.suite!r}"
            )
        return self

    @model_validator(mode="after")
    def _in_order(self) -> ExportTask:
        _ordered(self.started, self.ended, "the task")
        return self


class ExportResult(_Strict):
    run: Uuid
    suite: Annotated[str, Field(max_length=100)] | None = None
    # (check_id, version)
    check: Annotated[tuple[Annotated[str, Field(strict=True)], StrictInt], Field(strict=False)]
    attempt: Annotated[StrictInt, Field(ge=1, le=1_000)]
    status: Status
    duration_s: Annotated[Number, Field(ge=0, le=1e7)] = 0.0
    message: Annotated[str, Field(max_length=MAX_MESSAGE)] = ""
    log: Annotated[str, Field(max_length=MAX_LOG)] = ""
    metrics: dict[
        Annotated[str, Field(max_length=100)],
        StrictBool | StrictInt | StrictFloat | Annotated[str, Field(max_length=2_000)] | None,
    ] = {}
    samples: Annotated[list[Number], Field(max_length=MAX_SAMPLES)] = []
    # what the evidence says ran (store/models.Result.device/library); absent in older exports
    device: Annotated[str, Field(max_length=200), Plain] | None = None
    library: Annotated[str, Field(max_length=200), Plain] | None = None
    # spec.definition_hash of the check as its run defined it; absent in older exports
    definition: Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")] | None = None

    @field_validator("duration_s")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("must be a finite number of seconds")
        return v

    @field_validator("metrics")
    @classmethod
    def _few(cls, v: dict[str, Any]) -> dict[str, Any]:
        if len(v) > MAX_METRICS:
            raise ValueError(f"too many metrics ({len(v)} > {MAX_METRICS})")
        bad = [k for k, x in v.items() if isinstance(x, float) and not math.isfinite(x)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not a finite number (JSON has no NaN or infinity)")
        return v

    @field_validator("samples")
    @classmethod
    def _finite_samples(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(x) for x in v):
            raise ValueError("samples must be finite numbers")
        return v


class ExportInventory(_Strict):
    run: Uuid
    component: Name
    value: Annotated[str, Field(max_length=2_000), Plain]
    source: Annotated[str, Field(min_length=1, max_length=40), Plain]
    evidence: Annotated[str, Field(max_length=MAX_LOG)] = ""
    extra: Blob = {}


class ExportDocument(_Strict):
    format: Literal["valorch-results"]
    schema_: Literal[1] = Field(alias="schema")
    images: list[ExportImage]
    hosts: list[ExportHost]
    checks: list[ExportCheck]
    runs: list[ExportRun]
    tasks: list[ExportTask]
    results: list[ExportResult]
    inventory: list[ExportInventory]

    model_config = ConfigDict(**_Strict.model_config, populate_by_name=True)

    @model_validator(mode="after")
    def _references(self) -> ExportDocument:
        images = {(i.reference, i.digest, i.alias) for i in self.images}
        hosts = {h.fingerprint for h in self.hosts}
        checks = {(c.check_id, c.version) for c in self.checks}
        runs: set[str] = set()
        for n, r in enumerate(self.runs):
            if r.id in runs:
                raise ValueError(f"runs[{n}].id: run {r.id} appears twice")
            runs.add(r.id)
            if tuple(r.image) not in images:
                raise ValueError(f'runs[{n}].image: {list(r.image)} is not one of "images"')
            if r.host not in hosts:
                raise ValueError(
                    f'runs[{n}].host: {r.host!r} is not the fingerprint of one of "hosts"'
                )
        groups: tuple[tuple[str, Sequence[ExportTask | ExportResult | ExportInventory]], ...] = (
            ("tasks", self.tasks),
            ("results", self.results),
            ("inventory", self.inventory),
        )
        for what, rows in groups:
            for n, row in enumerate(rows):
                if row.run not in runs:
                    raise ValueError(f'{what}[{n}].run: run {row.run} is not one of "runs"')
        seen: set[tuple[str, tuple[str, int], int]] = set()
        for n, res in enumerate(self.results):
            if tuple(res.check) not in checks:
                raise ValueError(f'results[{n}].check: {list(res.check)} is not one of "checks"')
            key = (res.run, res.check, res.attempt)
            if key in seen:
                raise ValueError(
                    f"results[{n}].attempt: attempt {res.attempt} of {res.check[0]} in run "
                    f"{res.run} appears twice"
                )
            seen.add(key)
        return self


def problems(doc: Any) -> list[str]:
    """What is wrong with an export document, each naming its place; [] when it is valid."""
    if not isinstance(doc, dict):
        return [f"(top level): a results export is a JSON object, not {type(doc).__name__}"]
    try:
        ExportDocument.model_validate(doc)
    except ValidationError as exc:
        out = []
        for err in exc.errors()[:10]:
            where = _place(err["loc"])
            fixed = {"extra_forbidden": "unknown key", "missing": "required key is missing"}
            msg = fixed.get(err["type"], err["msg"]).removeprefix("Value error, ")
            if where == "(top level)" and msg[:1].isalpha() and "." in msg.split(":", 1)[0]:
                out.append(msg)  # a reference problem names its own place
            else:
                out.append(f"{where}: {msg}")
        return out
    return []


def _place(loc: tuple[Any, ...]) -> str:
    """('results', 3, 'status') → results[3].status"""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(
            ("function-", "int", "float", "str", "bool", "none", "constrained")
        ):
            continue  # pydantic's union member labels
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"
