"""``valorch qualify --image CANDIDATE``: qualify an image that is not in the catalog (a tag
or digest just built or pushed) against a baseline, without editing the catalog.

The candidate runs the release job's suites (``--job``), or the smoke suite; the catalog
resolves it as any reference it does not list (no expectations, its versions measured).
The baseline then holds the one image it succeeds: a diff of one image against one other
compares them check by check (regression/rule.compare)."""

from __future__ import annotations

from pathlib import Path

from ..bounds import MAX_NAME
from ..catalog.core import Catalog, load_job, validate_suites
from ..errors import InputError
from ..spec import JobSpec, SuiteRef


def candidate_job(cat: Catalog, job: Path | None, image: str | None) -> JobSpec:
    """The job to qualify: ``job`` as written; with ``image``, its suites (or smoke) on the
    candidate alone."""
    if image is None:
        if job is None:
            raise InputError(
                "nothing to qualify: pass --job FILE, --image CANDIDATE, or both",
                "e.g. valorch qualify --job jobs/release.yaml --image registry.example/pytorch:rc1 "
                "--baseline v0.2",
            )
        return load_job(job, cat)
    cat.resolve(image)  # an unusable reference is exit 2 before anything runs
    if job is not None:
        spec = load_job(job, cat)
        # a stored name is at most MAX_NAME characters (what an export can bring back)
        name = f"{spec.name[: MAX_NAME - len('-candidate')]}-candidate"
        return spec.model_copy(update={"name": name, "images": (image,)})
    suites = (SuiteRef(name="smoke"),)
    validate_suites(suites)
    return JobSpec(name="candidate", images=(image,), suites=suites)


def check_baseline_for(
    spec: JobSpec, cat: Catalog, base_envs: tuple[str, ...], baseline: str
) -> None:
    """A single image qualified against a baseline of several other images would be compared
    with none of them (a diff pairs by alias): bad input, naming what to set instead."""
    aliases = [i.alias for i in cat.select(spec.images)]
    if len(aliases) == 1 and aliases[0] not in base_envs and len(base_envs) > 1:
        raise InputError(
            f"--baseline {baseline} holds {len(base_envs)} images ({', '.join(base_envs[:6])}); "
            f"{aliases[0]} is compared with one",
            "set a baseline of the image it succeeds: valorch baseline set NAME RUN (a run of that "
            "image), then --baseline NAME",
        )
