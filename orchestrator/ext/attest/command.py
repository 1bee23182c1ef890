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
    out,
    print_json,
)


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
        service.Request(run, version, qualify, out_dir, push, url),
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
        ..., "--image", help="Image reference (tag or digest) in its registry."
    ),
    key: Path = typer.Option(
        ..., "--key", help="Public key PEM the attestations must be signed with."
    ),
    require: str = typer.Option(
        "passed", "--require", help="qualified, passed (every check) or passed:CHECK-GLOB."
    ),
    max_age: str = typer.Option(
        None, "--max-age", help="Reject attestations older than this (30d, 12h)."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Exit 0 when a signed attestation on the image's digest satisfies --require; 1 when none does."""
    satellites.require("attest", "valorch verify")
    from orchestrator.ext.attest import verify as service

    found = service.verify(image, key, require=require, max_age=max_age)
    if as_json:
        print_json(
            {
                "image": found.image,
                "digest": found.digest,
                "holds": found.holds,
                "looked": found.looked,
                "attestations": [
                    {
                        "where": f.where,
                        "predicateType": f.predicate_type,
                        "ok": f.ok,
                        "reason": f.reason,
                    }
                    for f in found.findings
                ],
            }
        )
    else:
        for f in found.findings:
            err.print(f"  {'ok ' if f.ok else 'no '} {f.where}: {f.reason}", markup=False)
        if found.holds:
            out.print(
                f"verified: {found.image} ({found.digest}) satisfies --require {require}",
                markup=False,
            )
        else:
            err.print(
                f"not verified: no attestation of {found.image} ({found.digest}) satisfies --require "
                f"{require}",
                markup=False,
            )
    end_with(found.outcome)
