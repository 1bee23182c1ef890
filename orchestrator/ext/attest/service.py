"""valorch attest: signed in-toto attestations per image digest, from a run, a published
matrix version or a qualification; stored beside the runs, written as ``.intoto.jsonl``,
and attached to the image in its registry with ``push``.

Order of work, so that bad input costs nothing and nothing is pushed half-way: the key
is loaded, the evidence gathered and every subject checked first; then the envelopes are
signed and stored; then, with ``push``, every image digest is looked up in its registry
before the first artifact goes up."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from orchestrator import imageref, outfile, yamlio
from orchestrator.errors import InfrastructureError, InputError, ValorchError
from orchestrator.ext.attest import artifacts, intoto, signing
from orchestrator.hostclass import host_class
from orchestrator.matrix.model import verdict
from orchestrator.registry import RegistryClient
from orchestrator.store import attestations as store
from orchestrator.store import queries


@dataclass(frozen=True)
class Made:
    subject: str
    digest: str
    predicate_type: str
    result: str  # PASSED | WARNED | FAILED
    envelope: dict[str, Any]
    file: str = ""
    pushed: str = ""


def _name(reference: str) -> str:
    try:
        return imageref.parse(reference).repository
    except InputError:
        return reference.split("@", 1)[0].rsplit(":", 1)[0] if "/" in reference else reference


def _evidence(
    session: Session, runs: list[Any], url_base: str, source: str
) -> list[intoto.Evidence]:
    """One Evidence per image digest of ``runs``: each check's final verdict from the newest
    run that has it."""
    by_digest: dict[str, list[Any]] = {}
    for run in sorted(runs, key=lambda r: r.started):
        digest = run.image.digest or ""
        if not imageref.DIGEST.fullmatch(digest):  # the whole digest: it names a file (_write)
            raise InputError(
                f"run {run.id[:8]} of {run.image.reference} has no sha256 image digest "
                f"({digest[:100]!r} is not sha256:<64 hex digits>); an attestation needs one",
                "run an image pulled from a registry (valorch records its digest)",
            )
        if (run.meta or {}).get("image_id") == digest:
            raise InputError(
                f"run {run.id[:8]} of {run.image.reference} ran a local image: {digest} is its "
                "image id (no registry served it, it was never pushed), not a manifest digest "
                "an attestation can name",
                f"push it (docker push {run.image.reference}), run it from the registry "
                f"(valorch run --image {run.image.reference} --pull always), then attest that run",
            )
        by_digest.setdefault(digest, []).append(run)
    out = []
    for digest, group in by_digest.items():
        verdicts: dict[str, str] = {}
        for run in group:  # oldest first: a newer run's verdict replaces an older one
            per: dict[str, list[tuple[int, str]]] = {}
            for r in queries.run_results(session, run.id):
                per.setdefault(r.check.check_id, []).append((r.attempt, r.status))
            for check, attempts in per.items():
                v = verdict(s for _, s in sorted(attempts))
                if v not in ("skip", "n/a", "missing"):
                    verdicts[check] = v
        last = group[-1]
        suites = sorted({t.suite for run in group for t in run.tasks})
        base = url_base.rstrip("/")
        url = f"{base}/runs/{last.id}.html" if url_base else f"valorch:{source.replace(' ', '/')}"
        out.append(
            intoto.Evidence(
                name=_name(last.image.reference),
                digest=digest,
                verdicts=verdicts,
                spec_hash=last.spec_hash,
                valorch_version=last.valorch_version,
                host_classes=tuple(sorted({host_class(r.host.spec) for r in group})),
                suites=tuple(suites),
                runs=tuple(r.id for r in group),
                url=url,
                job=last.job,
                attested_at=_now(),
                imported_from=tuple(
                    f"run {r.id[:8]} from {imported_from(r)}" for r in group if imported_from(r)
                ),
            )
        )
    return out


def _runs_of(session: Session, request: Request) -> tuple[list[Any], str, intoto.Policy | None]:
    run, version, qualify = request.run, request.version, request.qualify
    if run:
        row = queries.get_run(session, run)
        if row is None:
            raise InputError(
                f"--run {run}: no such run in the results store",
                "valorch results list shows the runs",
            )
        if row.state == "running" or row.ended is None:
            raise InputError(
                f"--run {run}: run {row.id[:8]} is still running; its results are not final",
                "attest it when it has ended (valorch results show RUN shows its state)",
            )
        return [row], f"run {row.id}", None
    if version:
        ids = store.version_runs(session, version)
        if ids is None:
            raise InputError(
                f"--version {version}: no such published matrix version",
                "valorch matrix versions lists them",
            )
        rows = store.runs(session, ids)
        if not rows:
            raise InputError(
                f"--version {version}: the version names no runs in this store",
                "attest from the store the version was published from",
            )
        return rows, f"version {version}", None
    assert qualify is not None
    doc = _qualify_doc(qualify)
    rows = store.runs(session, doc["runs"])
    missing = set(doc["runs"]) - {r.id for r in rows}
    if missing:
        raise InputError(
            f"--qualify {qualify}: runs {', '.join(sorted(m[:8] for m in missing))} are not in this "
            "results store",
            "pass the --db the qualification wrote to",
        )
    policy = intoto.Policy(
        job=doc["job"],
        baseline=doc["baseline"],
        passed=bool(doc["qualified"]),
        verified_at=doc.get("finished") or _now(),
        accepted=_accepted(doc.get("accepted")),
    )
    return rows, f"qualify {qualify}", policy


def _accepted(rows: Any) -> tuple[str, ...]:
    """The accepted regressions a qualification recorded (qualify.json ``accepted``), one line
    each; anything malformed there is left out."""
    if not isinstance(rows, list):
        return ()
    return tuple(
        f"{r['check']} {r['env']} by {r['by']} until {r['until']}: {r['reason']}"[:1000]
        for r in rows
        if isinstance(r, dict)
        and all(isinstance(r.get(k), str) for k in ("check", "env", "by", "until", "reason"))
    )


def _qualify_doc(path: Path) -> dict[str, Any]:
    f = Path(path) / "qualify.json"
    if not f.exists() and not f.is_symlink():
        raise InputError(
            f"--qualify {path}: no qualify.json in it",
            "pass the --out-dir of a `valorch qualify` (it writes qualify.json)",
        )
    text = yamlio.read_text(f, "qualify.json", yamlio.CAPS["export"])
    try:
        doc = json.loads(text, parse_int=yamlio.bounded_int)
    except (ValueError, RecursionError) as exc:
        raise InputError(
            f"--qualify {f}: cannot read it ({exc})", "run valorch qualify again"
        ) from None
    if (
        not isinstance(doc, dict)
        or not all(k in doc for k in ("job", "baseline", "runs", "qualified"))
        or not isinstance(doc["runs"], list)
        or not doc["runs"]
    ):
        raise InputError(
            f"--qualify {f}: not a qualification record (job, baseline, runs, qualified)",
            "pass the --out-dir of a `valorch qualify`",
        )
    return doc


def _now() -> str:
    """RFC 3339 to the microsecond: verify orders attestations by this time, and two made in
    the same second would tie."""
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def imported_from(run: Any) -> str:
    """The file a run was imported from (``results import``), "" for a run valorch ran."""
    how, sep, source = (run.origin or "").partition(queries.IMPORTED)
    return (source or "an export") if sep and not how else ""


def _refuse_imported(rows: list[Any], source: str) -> None:
    imported = [r for r in rows if imported_from(r)]
    if imported:
        r = imported[0]
        raise InputError(
            f"attest {source}: {len(imported)} of its runs were imported, not run here (run {r.id[:8]} "
            f"from {imported_from(r)}): an attestation signs what valorch measured",
            "attest a run valorch ran (valorch run), or pass --allow-imported to sign it with "
            'its provenance ("imported") in the statement, which verify refuses unless '
            "--allow-imported",
        )


@dataclass(frozen=True)
class Request:
    """What ``valorch attest`` attests (one of run, version, qualify), and where it goes."""

    run: str | None = None
    version: str | None = None
    qualify: Path | None = None
    out_dir: Path | None = None
    push: bool = False
    url_base: str = ""
    allow_imported: bool = False  # sign runs imported from elsewhere, saying so


def attest(factory: sessionmaker[Session], key: Path, request: Request) -> list[Made]:
    if sum(x is not None and x != "" for x in (request.run, request.version, request.qualify)) != 1:
        raise InputError(
            "attest needs exactly one of --run RUN, --version V, --qualify DIR",
            "valorch attest --run RUN --key key.pem",
        )
    key_signer = signing.signer(key)  # a bad key: exit 2 before anything is read or written
    with factory() as session:
        rows, source, policy = _runs_of(session, request)
        if not request.allow_imported:
            _refuse_imported(rows, source)
        evidence = _evidence(session, rows, request.url_base, source)
        statements: list[tuple[intoto.Evidence, str, dict[str, Any], str]] = []
        for ev in evidence:
            pred = intoto.test_result(ev)
            doc = intoto.statement(ev, intoto.TEST_RESULT, pred)
            statements.append((ev, intoto.TEST_RESULT, doc, pred["result"]))
            if policy is not None:
                v = intoto.vsa(ev, policy)
                doc = intoto.statement(ev, intoto.VSA, v)
                statements.append((ev, intoto.VSA, doc, v["verificationResult"]))
    # every digest exists before the first push
    targets = _check_registry(evidence) if request.push else {}
    made: list[Made] = []
    for ev, ptype, doc, result in statements:
        envelope = signing.sign(intoto.payload(doc), intoto.PAYLOAD_TYPE, key_signer)
        made.append(Made(ev.name, ev.digest, ptype, result, envelope))
    runs_of = {ev.digest: ev.runs[-1] for ev in evidence}
    written: list[Path] = []
    if request.out_dir is not None:  # the files first: a row names a file that exists
        made, written = _write(made, request.out_dir)
    ids: dict[str, list[int]] = {}
    try:
        with factory.begin() as session:
            created = datetime.now(timezone.utc).replace(tzinfo=None)
            for m in made:
                row = store.add(
                    session,
                    run_id=runs_of[m.digest] if request.run or request.qualify else None,
                    source=source,
                    subject=m.subject,
                    digest=m.digest,
                    predicate_type=m.predicate_type,
                    envelope=json.dumps(m.envelope, separators=(",", ":")),
                    keyid=m.envelope["signatures"][0]["keyid"],
                    created=created,
                )
                ids.setdefault(m.digest, []).append(row.id)
    except BaseException:  # no row: the files it would have named are removed
        for path in written:
            path.unlink(missing_ok=True)
        raise
    if request.push:
        made = _push(factory, targets, made, ids)
    return made


def _check_registry(evidence: Iterable[intoto.Evidence]) -> dict[str, Any]:
    client = RegistryClient()
    targets = {}
    for ev in evidence:
        ref = imageref.parse(ev.name).with_digest(ev.digest)
        try:
            client.resolve(ref)
        except artifacts.ManifestNotFoundError:
            raise InputError(
                f"{ev.name}@{ev.digest} is not in its registry: nothing was pushed",
                "push the image first; an attestation attaches to the digest the registry serves",
            ) from None
        targets[ev.digest] = ref
    return targets


def _write(made: list[Made], out_dir: Path) -> tuple[list[Made], list[Path]]:
    """``<out_dir>/sha256-<hex>.intoto.jsonl`` per digest, each written to a temporary file
    beside it and renamed into place: a link planted at that name is replaced, never written
    through, and a file that could not be written whole is not left behind (nor are the
    others of this call). Returns the made attestations with their files, and the files."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error(out_dir, exc) from None
    files: dict[str, list[Made]] = {}
    for m in made:
        files.setdefault(m.digest, []).append(m)
    done: list[Made] = []
    written: list[Path] = []
    try:
        for digest, group in files.items():
            # the digest is sha256:<64 hex digits> (_evidence): the name stays in out_dir
            path = out_dir / f"{digest.replace(':', '-')}.intoto.jsonl"
            try:  # written beside it and renamed over it: a link planted there is replaced
                outfile.write(path, intoto.jsonl(m.envelope for m in group).encode("utf-8"))
            except ValorchError as exc:
                exc.message = f"{exc.message}; no attestation was written or stored"
                raise
            written.append(path)
            done += [replace(m, file=str(path)) for m in group]
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return done, written


def _write_error(path: Path, exc: OSError) -> Exception:
    import errno

    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return InfrastructureError(
            f"{path}: the disk is full ({exc.strerror}): no attestation was written or stored",
            f"free space on the file system of {path.parent} and run valorch attest again",
        )
    return InputError(
        f"{path}: cannot write it ({exc.strerror}): no attestation was written or stored",
        "pass an --out-dir you can write",
    )


def _push(
    factory: sessionmaker[Session],
    targets: dict[str, Any],
    made: list[Made],
    ids: dict[str, list[int]],
) -> list[Made]:
    client = RegistryClient()
    where: dict[str, str] = {}
    for digest, ref in targets.items():
        envs = [
            (m.predicate_type, json.dumps(m.envelope, separators=(",", ":")))
            for m in made
            if m.digest == digest
        ]
        pushed = artifacts.attach(client, ref, digest, envs)
        where[digest] = ", ".join(p.where for p in pushed)
        with factory.begin() as session:
            store.mark_pushed(session, ids[digest], where[digest])
    return [replace(m, pushed=where.get(m.digest, "")) for m in made]
