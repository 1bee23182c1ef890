"""Where an option or a file's field acts, declared once beside it, and every verdict of
"no effect" read from that one declaration.

An option declares its ``Applies`` where it is written (``commands/flags.option``), a job's
or a hosts file's field in its model (``spec.py``, ``Annotated[..., Applies(...)]``). Three
things are derived from it and from nothing else: the refusal of an option typed where it
does nothing (``commands/inert.py``), the help text's note of where it applies, and the
field checks of a job spec (``catalog/jobcheck.py``) and a hosts file (``hosts/inventory``).
A new option says where it acts in one place; no table beside it can drift. This module
imports nothing, so that the CLI reads it at start-up without the models.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Params = Mapping[str, Any]


def plain(value: object) -> object:
    """An enum choice as its value (``ExecutorChoice.slurm`` → ``"slurm"``)."""
    return getattr(value, "value", value)


@dataclass(frozen=True)
class Mode:
    """A way a command runs that decides whether other options act, written ``flag``: it
    holds when the parameter ``param`` is set (or equals ``value``). ``why`` says what an
    option it silences is told."""

    flag: str
    param: str
    value: object = None
    why: str = ""

    def holds(self, params: Params) -> bool:
        got = plain(params.get(self.param))
        return bool(got) if self.value is None else got == self.value


RESUME = Mode("--resume", "resume", why="the stored batch runs as it was planned")
JSON = Mode("--json", "as_json", why="--json prints JSON and nothing else")
CPU_ONLY = Mode("--cpu-only", "cpu_only", why="no GPU container starts")
JOB = Mode("--job", "job")
READINESS = Mode("--readiness", "readiness")
KNOWN_ISSUES = Mode("--known-issues", "known_issues")
LEVEL_1 = Mode("--level 1", "level", 1)


@dataclass(frozen=True)
class Silenced:
    """Why an option does nothing here: ``what`` silences it ("with --resume"), ``why`` (may
    be empty), and ``fix``, the other way out besides dropping it."""

    what: str
    why: str
    fix: str


@dataclass(frozen=True)
class Applies:
    """Where an option or a field acts. ``executors``: the executors it acts with (empty: every one;
    a field's are those of the images, ``host`` or ``docker``); ``needs``: a mode without which it
    does nothing; ``not_with``: modes in which it does nothing, unless its value is ``agrees``
    (``--no-matrix`` with ``--json`` says what ``--json`` does anyway). ``why`` says why it does
    nothing outside ``executors`` or without ``needs``."""

    executors: tuple[str, ...] = ()
    needs: Mode | None = None
    not_with: tuple[Mode, ...] = ()
    agrees: object = None
    why: str = ""

    def silenced(self, params: Params, value: object) -> Silenced | None:
        """Why the option does nothing with ``params`` (the command's parameters, the
        option's own ``value`` among them); None where it acts."""
        for mode in self.not_with:
            if mode.holds(params) and (self.agrees is None or plain(value) != self.agrees):
                return Silenced(f"with {mode.flag}", mode.why, f"drop {mode.flag}")
        if self.needs is not None and not self.needs.holds(params):
            return Silenced(f"without {self.needs.flag}", self.why, f"add {self.needs.flag}")
        executor = plain(params.get("executor"))
        if self.executors and executor is not None and executor not in self.executors:
            what = (
                f"without --executor {self.executors[0]}"
                if len(self.executors) == 1
                else f"with --executor {executor}"
            )
            return Silenced(what, self.why, f"use --executor {_or(self.executors)}")
        return None

    def note(self, params: Collection[str]) -> str:
        """Where it applies, for its help text in a command of ``params`` (empty where it
        applies everywhere): an executor or a mode that command does not choose is not named."""
        chosen = self.executors and "executor" in params
        parts = [f"only with --executor {_or(self.executors)}"] if chosen else []
        parts += [f"only with {self.needs.flag}"] if self.needs else []
        silencing = [m.flag for m in self.not_with if m.param in params]
        parts += [f"not with {', '.join(silencing)}"] if silencing else []
        return f"[{'; '.join(parts)}]" if parts else ""

    def unused_on(self, executors: Collection[str]) -> str | None:
        """Why a field does nothing where ``executors`` (those of the images a job or a run
        chose) run it; None where one of them honours it."""
        if not self.executors or not executors or set(executors) & set(self.executors):
            return None
        where = " or ".join(_WHERE.get(e, e) for e in sorted(executors))
        return f"its images all run {where}" + (f", and {self.why}" if self.why else "")

    def add(self) -> str:
        """What to add to a job for a field to act."""
        return _or(tuple(_ADD.get(e, e) for e in self.executors))


_WHERE = {"host": "on the local interpreter (image host)", "docker": "in a container"}
_ADD = {"host": "the image host", "docker": "a container image"}


def _or(names: tuple[str, ...]) -> str:
    return " or ".join(names)


def fields(model: Any) -> Iterator[tuple[str, Applies]]:
    """(name, declaration) of each field of a pydantic ``model`` that declares where it acts."""
    for name, info in model.model_fields.items():
        for meta in info.metadata:
            if isinstance(meta, Applies):
                yield name, meta
