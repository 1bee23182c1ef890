"""A job spec checked whole: every mistake of a file at once, each at its line and key.

One function, ``check_document``, decides whether a job spec is valid; ``valorch jobs
validate``, ``jobs show``, ``run --job``, ``qualify`` and ``hosts check --job`` read a job
through it (``load_job``). Pure apart from reading the spec and its workload paths: a
document in, a ``JobCheck`` (the job, its chosen images, its problems) out.

What is checked, and reported together (docs/input-validation.md, "Job specs"):

- the model: unknown keys (with the nearest known key), types, ranges, fixed sets such as
  ``tier`` (with the nearest value), text that a results import would refuse (names and
  labels: printable, one line, 1 to 200 characters), an ``argv`` that cannot be executed;
- each suite: its name (with the nearest suite), a declared suite that declares nothing,
  each ``checks`` glob (an unclosed ``[`` or a glob that selects no check of the suite is
  a mistake: it would run nothing and pass; the nearest check ids are named), a pytest
  workload's path;
- each image selector, against the catalog (with the nearest aliases);
- once the rest holds, the fields the job's images would ignore, as each field declares
  where it acts (``spec.SuiteRef``, applies.py): a field left out, or written with its
  default value, is never refused.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from .. import applies, yamlio
from ..errors import AmbiguousImageError, SpecError, UnknownImageError
from ..spec import ImageSpec, JobSpec, SuiteRef


class Catalog(Protocol):
    """What a job check asks of the catalog (``core.Catalog``, which imports this module)."""

    def select(self, selectors: Iterable[str]) -> tuple[ImageSpec, ...]: ...


WHAT = "job spec"
DECLARED = ("command", "pytest")

WORKLOAD_HINT = (
    "a workload path is relative to the job file and must stay inside its directory (it is shipped "
    "into the container, to any engine); to ship tests from elsewhere name their directory with "
    "--workload-root DIR"
)
GLOB_HINT = "valorch suites show SUITE lists the check ids; globs use * ? and [...]"


@dataclass(frozen=True)
class JobCheck:
    """A job spec as checked: the job (None unless it is valid), the images its selectors
    chose (given a catalog) and every problem found, in the file's order."""

    path: Path
    job: JobSpec | None
    images: tuple[ImageSpec, ...]
    problems: tuple[yamlio.Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        """Each problem as ``FILE:LINE: job spec: key 'K': what``, its hint on the next line."""
        out = []
        for p in self.problems[: yamlio.MAX_PROBLEMS]:
            out.append(p.text(self.path, WHAT))
            if p.hint:
                out.append(f"    hint: {p.hint}")
        if len(self.problems) > yamlio.MAX_PROBLEMS:
            out.append(f"… and {len(self.problems) - yamlio.MAX_PROBLEMS} more")
        return out

    def error(self) -> SpecError:
        """The problems as one error (exit 2): a single one as it is, several listed."""
        if len(self.problems) == 1:
            only = self.problems[0]
            return SpecError(only.text(self.path, WHAT), only.hint)
        return SpecError(
            f"{len(self.problems)} mistakes in {self.path}:\n" + "\n".join(self.lines()),
            f"fix each of them; valorch jobs validate {self.path} checks the file again "
            "without running anything",
        )


def load_job(
    path: Path, catalog: Catalog | None = None, workload_roots: Iterable[Path] = ()
) -> JobSpec:
    """A job spec, with its suites, checks and (given the catalog) images checked; every
    mistake of the file is one SpecError (exit 2). A shipped workload must lie inside the job
    file's directory or one of ``workload_roots`` (``--workload-root DIR``)."""
    checked = check_job(path, catalog, workload_roots)
    if checked.job is None:
        raise checked.error()
    return checked.job


def check_job(
    path: Path, catalog: Catalog | None = None, workload_roots: Iterable[Path] = ()
) -> JobCheck:
    """``check_document`` of the file at ``path``; a file that cannot be read or is not YAML
    is a SpecError (nothing in it can be checked)."""
    return check_document(yamlio.load(Path(path), WHAT), catalog, tuple(workload_roots))


def check_document(
    doc: yamlio.Document, catalog: Catalog | None = None, roots: tuple[Path, ...] = ()
) -> JobCheck:
    """Every mistake of a parsed job spec (module docstring), in the file's order."""
    data = doc.data
    if not isinstance(data, dict):
        found = f"a {WHAT} must be a mapping of keys, found {type(data).__name__}"
        problem = yamlio.Problem(doc.line(()), "(top level)", found)
        return JobCheck(doc.path, None, (), (problem,))
    problems: list[yamlio.Problem] = []
    job: JobSpec | None = None
    try:
        job = JobSpec.model_validate(data)
    except ValidationError as exc:
        problems += yamlio.problems_of(doc, exc, JobSpec)
    refs, suite_problems = _suites(doc, data.get("suites"), roots)
    problems += suite_problems
    images, image_problems = _images(doc, data.get("images"), catalog)
    problems += image_problems
    if job is not None and not problems:
        job = job.model_copy(update={"suites": tuple(refs)})
        if catalog is not None:
            problems += _without_effect(job, doc, images)
    problems.sort(key=lambda p: p.line)  # stable: one line's problems keep their order
    return JobCheck(doc.path, job if not problems else None, images, tuple(problems))


def _problem(
    doc: yamlio.Document, loc: tuple[Any, ...], message: str, hint: str | None = None
) -> yamlio.Problem:
    return yamlio.Problem(doc.line(loc), ".".join(map(str, loc)), message, hint)


def _suites(
    doc: yamlio.Document, raw: Any, roots: tuple[Path, ...]
) -> tuple[list[SuiteRef], list[yamlio.Problem]]:
    """The job's suites as checked one by one (each suite that validates alone is checked
    further, whatever is wrong elsewhere), and their problems beyond the model's."""
    from ..checks_manifest import manifest

    known = manifest().suites
    refs: list[SuiteRef] = []
    problems: list[yamlio.Problem] = []
    for i, entry in enumerate(raw if isinstance(raw, list) else ()):
        shorthand = isinstance(entry, str)
        name = entry if shorthand else entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            continue  # the model says what is wrong with it
        if name not in known:
            said = f"unknown suite '{name}'{yamlio.did_you_mean(name, known)}"
            hint = "known suites: " + ", ".join(known)
            problems.append(_problem(doc, ("suites", i, "name"), said, hint))
            continue
        try:
            ref = SuiteRef.model_validate({"name": entry} if shorthand else entry)
        except ValidationError as exc:
            # the globs of a built-in suite are checked all the same; the model reports the rest
            built_in = isinstance(entry, dict) and name not in DECLARED
            globs = entry.get("checks") if built_in else None
            if isinstance(globs, list) and all(isinstance(g, str) for g in globs):
                ids = suite_check_ids(SuiteRef(name=name))
                problems += _glob_problems(doc, i, name, tuple(globs), ids)
            if REPEATED not in str(exc):
                problems += _repeated_ids(doc, i, entry)
            continue
        if undeclared := declares_nothing(ref):
            problems.append(_problem(doc, ("suites", i), *undeclared))
            continue
        problems += _glob_problems(doc, i, name, ref.checks, suite_check_ids(ref))
        ref, workload = _workload(ref, i, doc, roots)
        problems += workload
        refs.append(ref)
    return refs, problems


REPEATED = "command ids must be unique"  # SuiteRef's own words (spec.py)


def _repeated_ids(doc: yamlio.Document, i: int, entry: Any) -> list[yamlio.Problem]:
    """Repeated command ids of a suite entry with another mistake: the model checks them
    only once every field is valid, which would leave them to a second pass."""
    commands = entry.get("commands") if isinstance(entry, dict) else None
    ids = (
        [c.get("id") for c in commands if isinstance(c, dict)] if isinstance(commands, list) else []
    )
    named = [x for x in ids if isinstance(x, str)]
    dupes = sorted({x for x in named if named.count(x) > 1})
    if not dupes:
        return []
    return [_problem(doc, ("suites", i), f"{REPEATED}; repeated: {', '.join(dupes)}")]


def declares_nothing(ref: SuiteRef) -> tuple[str, str] | None:
    """(what, what to do) when a suite that runs what a job declares declares nothing."""
    if ref.name not in DECLARED or ref.declaration() is not None:
        return None
    what = "a 'commands' list" if ref.name == "command" else "a 'pytest' mapping"
    return (
        f"suite {ref.name} runs what a job spec declares, and this one declares nothing: it "
        f"needs {what}",
        "see jobs/commands-example.yaml, or valorch suites show " + ref.name,
    )


def suite_check_ids(ref: SuiteRef) -> list[str]:
    """Every check id the suite can run, before its ``checks`` globs filter them: the
    manifest's for a built-in suite, the declared ones (``command.<id>``, ``pytest.run``)."""
    from ..checks_manifest import declared, manifest

    declaration = ref.declaration()
    if declaration is None:
        return [c["id"] for c in manifest().select(ref.name)]
    try:
        return [c["id"] for c in declared(ref.name, declaration)]
    except ValueError:
        return []  # a declaration the probe refuses: the model has said why


def glob_problem(pattern: str, ids: Sequence[str], suite: str) -> str | None:
    """Why a check glob selects nothing of ``ids`` (the suite's check ids), naming the nearest
    ids, else None: a selection that runs nothing would store an empty run and pass."""
    from ..regression.known_issues import glob_problem as malformed

    why = malformed(pattern)
    if why is None and any(fnmatch.fnmatchcase(i, pattern) for i in ids):
        return None
    near = yamlio.nearest(pattern, ids, 3) or list(ids[:3])
    return (
        f"{why + ' (it would match nothing)' if why else f'matches no check of suite {suite}'}"
        f"; nearest: {', '.join(near) or 'none'}"
    )


def _glob_problems(
    doc: yamlio.Document, i: int, suite: str, globs: Sequence[str], ids: Sequence[str]
) -> list[yamlio.Problem]:
    out = []
    for j, pattern in enumerate(globs):
        why = glob_problem(pattern, ids, suite)
        if why:
            loc = ("suites", i, "checks", j)
            out.append(_problem(doc, loc, f"check glob '{pattern}' {why}", GLOB_HINT))
    return out


def _workload(
    ref: SuiteRef, i: int, doc: yamlio.Document, roots: tuple[Path, ...]
) -> tuple[SuiteRef, list[yamlio.Problem]]:
    """A pytest workload's path relative to the job file, made absolute (``source``) after
    checking it exists, stays inside the job's directory (or a --workload-root), holds no
    link out, and is small enough to ship."""
    from ..executors.base import MAX_WORKLOAD
    from ..executors.workload_files import WorkloadError, contained, contained_files

    p = ref.pytest
    if p is None or p.in_image:
        return ref, []
    loc = ("suites", i, "pytest", "path")
    here = Path(doc.path).parent
    given = here / p.path
    src = given.resolve()
    if contained(given, [here, *roots]) is None:
        outside = f" and outside --workload-root {', '.join(map(str, roots))}" if roots else ""
        message = f"'{p.path}' resolves to {src}, outside the job's directory {here.resolve()}"
        return ref, [_problem(doc, loc, message + outside, WORKLOAD_HINT)]
    if not src.exists():
        hint = (
            "a relative path is resolved against the job file's directory and shipped into the "
            "container; for a path inside the image use an absolute path with in_image: true"
        )
        return ref, [_problem(doc, loc, f"{src} does not exist", hint)]
    try:
        files = contained_files(given)
    except WorkloadError as exc:
        return ref, [_problem(doc, loc, str(exc), WORKLOAD_HINT)]
    size = sum(real.stat().st_size for real, _ in files)
    if size > MAX_WORKLOAD:
        limit, hint = MAX_WORKLOAD >> 20, "ship only the test files (put data in the image)"
        message = f"{src} holds {size >> 20} MiB, more than the {limit} MiB shipped with a job"
        return ref, [_problem(doc, loc, message, hint)]
    shipped = p.model_copy(update={"source": str(src)})
    return ref.model_copy(update={"pytest": shipped}), []


def _images(
    doc: yamlio.Document, raw: Any, catalog: Catalog | None
) -> tuple[tuple[ImageSpec, ...], list[yamlio.Problem]]:
    """The images each selector chooses, and a problem (with the nearest aliases) for each
    selector that chooses none or is ambiguous."""
    if catalog is None or not isinstance(raw, list):
        return (), []
    chosen: dict[str, ImageSpec] = {}
    problems = []
    for i, sel in enumerate(raw):
        if not isinstance(sel, str):
            continue  # the model says what is wrong with it
        try:
            for image in catalog.select([sel]):
                chosen.setdefault(image.alias, image)
        except (UnknownImageError, AmbiguousImageError) as exc:
            problems.append(_problem(doc, ("images", i), exc.message, exc.hint))
    return tuple(chosen.values()), problems


def _without_effect(
    job: JobSpec, doc: yamlio.Document, images: Sequence[ImageSpec]
) -> list[yamlio.Problem]:
    """Each suite field written, not at its default, that the job's images would ignore."""
    used = {image.executor for image in images}
    return [
        _problem(
            doc,
            ("suites", i, key),
            f"has no effect on this job: {why}",
            f"remove {key}, or add {where.add()} to the job",
        )
        for key, where in applies.fields(SuiteRef)
        if (why := where.unused_on(used))
        for i, suite in enumerate(job.suites)
        if getattr(suite, key) != SuiteRef.model_fields[key].default and _written(doc, i, key)
    ]


def _written(doc: yamlio.Document, i: int, key: str) -> bool:
    suites = doc.data.get("suites") if isinstance(doc.data, dict) else None
    entry = suites[i] if isinstance(suites, list) and i < len(suites) else None
    return isinstance(entry, dict) and key in entry
