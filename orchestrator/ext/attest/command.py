"""valorch attest (signed in-toto attestations per image digest) and valorch verify (does a
deploy policy's requirement hold for an image?). docs/attestations.md."""

from __future__ import annotations

from pathlib import Path

import typer

from orchestrator import satellites
from orchestrator.commands import flags
from orchestrator.commands.common import (
    DbOption,
    JsonOption,
    deferred_sessions,
    end_with,
    err,
    load_catalog,
    out,
    print_json,
)
from orchestrator.errors import UnknownImageError
from orchestrator.imageref import looks_like_reference, parse


def attest(
    run: str = typer.Option(None, "--run", help="A run id (or a unique prefix) that has ended."),
    version: str = typer.Option(None, "--version", help="A published matrix version (v0.3)."),
    qualify: Path = typer.Option(None, "--qualify", help="The --out-dir of a `valorch qualify`."),
    key: Path = typer.Option(
        ...,
        "--key",
        envvar="VALORCH_SIGNING_KEY",
        help="Private key PEM (ECDSA P-256 or Ed25519) to sign with.",
    ),
    out_dir: Path = typer.Option(
        Path("results/attestations"),
        "--out-dir",
        callback=flags.OUT_DIR,
        help="Write <digest>.intoto.jsonl here.",
    ),
    push: bool = typer.Option(
        False,
        "--push",
        help="Attach the attestations to the images in their "
        "registries (referrers API, else cosign's sha256-<hex>.att tag).",
    ),
    url: str = typer.Option(
        "",
        "--url",
        envvar="VALORCH_SITE_URL",
        help="Base URL of the published site, for the link to the run.",
    ),
    allow_imported: bool = typer.Option(
        False,
        "--allow-imported",
        help="Sign runs imported from elsewhere (results import); the statement says so.",
    ),
    db: str = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Sign an in-toto test-result attestation (and a SLSA VSA for --qualify) per image digest."""
    satellites.require("attest", "valorch attest")
    from orchestrator.ext.attest import service

    # the store opens after the key and the flags are checked: bad input writes nothing
    made = service.attest(
        deferred_sessions(db),
        key,
        service.Request(run, version, qualify, out_dir, push, url, allow_imported),
    )
    if as_json:
        print_json(
            [
                {
                    "subject": m.subject,
                    "digest": m.digest,
                    "predicateType": m.predicate_type,
                    "result": m.result,
                    "file": m.file,
                    "pushed": m.pushed,
                }
                for m in made
            ]
        )
        return
    for m in made:
        out.print(
            f"{m.subject}@{m.digest}: {m.predicate_type.rsplit('/', 2)[-2]} {m.result}"
            + (f" -> {m.file}" if m.file else "")
            + (f"; pushed to {m.pushed}" if m.pushed else ""),
            markup=False,
        )


def verify(
    image: str = typer.Option(
        ...,
        "--image",
        help="Image reference (tag or digest) in its registry, or a catalog alias (its pinned digest).",
    ),
    key: Path = typer.Option(
        ..., "--key", help="Public key PEM the attestations must be signed with."
    ),
    require: str = typer.Option(
        "passed", "--require", help="qualified, passed (every check) or passed:CHECK-GLOB."
    ),
    max_age: str = typer.Option(
        None, "--max-age", help="Reject an attestation older than this (30d, 12h)."
    ),
    allow_imported: bool = typer.Option(
        False,
        "--allow-imported",
        help="Accept an attestation of results imported from elsewhere (results import).",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Exit 0 when the newest signed attestation on the image's digest satisfies --require; 1
    when it does not (docs/attestations.md)."""
    satellites.require("attest", "valorch verify")
    from orchestrator.ext.attest import report
    from orchestrator.ext.attest import verify as service

    decision = service.verify(
        catalogued(image), key, require=require, max_age=max_age, allow_imported=allow_imported
    )
    if as_json:
        print_json(report.as_json(decision))
    else:
        for stream, line in report.lines(decision):
            (out if stream == "out" else err).print(line, markup=False, soft_wrap=True)
    end_with(report.outcome(decision))


def catalogued(image: str) -> str:
    """A catalog alias (full or short, as every other command takes it) as the registry
    reference it names: its pinned digest, else its tag; a reference, or a name the catalog
    does not hold, as typed."""
    if looks_like_reference(image):
        return image
    try:
        spec = load_catalog(None).resolve(image)
    except UnknownImageError:
        return image
    if spec.local or spec.alias == "host" or not looks_like_reference(spec.reference):
        return image
    return parse(spec.reference).pinned(spec.digest) if spec.digest else spec.reference
