"""The pure parts of attestations: statements, predicates, PAE, the requirement rules; and the
referrers-API side of ext/attest/artifacts.py.

The local test registry (distribution 2.8) has no referrers API, so the referrers path runs
here against a small OCI 1.1 server on 127.0.0.1 that keeps blobs and manifests in memory
and answers ``GET /v2/<repo>/referrers/<digest>`` from the manifests' ``subject`` fields,
as the distribution spec describes; a switch makes it answer 404 like distribution 2.8."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import threading
from datetime import datetime, timedelta, timezone
from typing import ClassVar

import pytest

from orchestrator.errors import InputError
from orchestrator.ext.attest import artifacts, intoto, policy, verify
from orchestrator.imageref import parse
from orchestrator.registry import RegistryClient

DIGEST = "sha256:" + "ab" * 32


def ev(**verdicts) -> intoto.Evidence:
    return intoto.Evidence(
        name="reg.example/rocm/pytorch",
        digest=DIGEST,
        verdicts=verdicts,
        spec_hash="7d2f6413",
        valorch_version="0.1.0",
        host_classes=("amd:gfx942",),
        suites=("kernels",),
        runs=("r1",),
        url="https://site/runs/r1.html",
        job="nightly",
        attested_at="2026-01-01T00:00:00Z",
    )


def test_test_result_predicate_sorts_checks_into_passed_warned_failed():
    e = ev(
        **{
            "kernels.matmul.fp32": "pass",
            "kernels.conv.fp16": "fail",
            "features.sdpa": "partial",
            "features.nccl": "error",
            "kernels.fft": "flaky",
            "kernels.sort": "crash",
        }
    )
    p = intoto.test_result(e)
    assert p["result"] == "FAILED"
    assert p["passedTests"] == ["kernels.matmul.fp32"]
    assert p["failedTests"] == ["kernels.conv.fp16", "kernels.sort"]
    assert p["warnedTests"] == ["features.nccl", "features.sdpa", "kernels.fft"]
    assert intoto.test_result(ev(a="pass", b="partial"))["result"] == "WARNED"
    assert intoto.test_result(ev(a="pass"))["result"] == "PASSED"
    s = intoto.statement(e, intoto.TEST_RESULT, p)
    assert s["subject"] == [{"name": "reg.example/rocm/pytorch", "digest": {"sha256": "ab" * 32}}]
    assert intoto.subject_matches(s, DIGEST) and not intoto.subject_matches(
        s, "sha256:" + "cd" * 32
    )


def test_pae_is_dsse_v1():
    assert (
        intoto.pae("application/vnd.in-toto+json", b"{}")
        == b"DSSEv1 28 application/vnd.in-toto+json 2 {}"
    )


def test_requirements_and_ages_are_parsed_or_refused():
    assert verify.parse_requirement("qualified") == ("qualified", "")
    assert verify.parse_requirement("passed:kernels.*") == ("passed", "kernels.*")
    assert verify.parse_requirement(None) == ("passed", "")
    for bad in ("green", "passed:", "failed:x"):
        with pytest.raises(InputError):
            verify.parse_requirement(bad)
    assert verify.parse_age("30d") == timedelta(days=30) and verify.parse_age("90") == timedelta(
        seconds=90
    )
    for bad in ("-1d", "soon", "0s"):
        with pytest.raises(InputError):
            verify.parse_age(bad)


def _decide(statements, require="passed", **kw):
    kind_glob = verify.parse_requirement(require)
    atts = [policy.Decoded(f"reg/x#{i}", st, intoto.payload(st)) for i, st in enumerate(statements)]
    kw.setdefault("now", datetime(2026, 1, 10, tzinfo=timezone.utc))
    return policy.decide(
        atts,
        image="reg/x",
        digest=kw.pop("digest", DIGEST),
        requirement=kind_glob,
        require=require,
        **kw,
    )


def test_decide_names_the_reason():
    e = ev(**{"kernels.matmul.fp32": "pass", "kernels.conv.fp16": "fail"})
    s = intoto.statement(e, intoto.TEST_RESULT, intoto.test_result(e))
    d = _decide([s], "passed:kernels.matmul.*")
    assert d.holds and d.exit_code == 0 and d.attestations[0].role == "decides"
    d = _decide([s], "passed:kernels.*")
    assert not d.holds and "kernels.conv.fp16" in d.reasons[0].text
    d = _decide([s], digest="sha256:" + "cd" * 32)
    assert d.attestations[0].role == "rejected"
    assert d.attestations[0].summary.startswith("subject mismatch")
    d = _decide([s], "passed:kernels.matmul.*", max_age=timedelta(days=7))
    assert [r.code for r in d.reasons] == ["expired"]
    v = intoto.statement(
        e,
        intoto.VSA,
        intoto.vsa(e, intoto.Policy("release", "v0.2", False, "2026-01-09T00:00:00Z")),
    )
    d = _decide([s, v], "qualified", max_age=timedelta(days=7))
    assert [r.code for r in d.reasons] == ["result"] and "FAILED" in d.reasons[0].text
    assert [a.role for a in d.attestations] == ["ignored", "decides"]


class OCI11(http.server.BaseHTTPRequestHandler):
    """Blobs, manifests and the referrers API, in memory (one repository)."""

    blobs: ClassVar[dict] = {}
    manifests: ClassVar[dict] = {}
    referrers_api = True

    def _send(self, code, body=b"", ctype="application/json", headers=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        parts = self.path.split("?")[0].split("/")  # '', v2, repo, kind, ref
        kind, ref = parts[-2], parts[-1]
        if kind == "referrers":
            if not self.referrers_api:
                return self._send(404, b'{"errors":[{"code":"NOT_FOUND"}]}')
            found = [
                {
                    "mediaType": m["mediaType"],
                    "digest": d,
                    "size": len(raw),
                    "artifactType": m.get("artifactType"),
                }
                for d, (raw, m) in self.manifests.items()
                if (m.get("subject") or {}).get("digest") == ref
            ]
            return self._send(
                200,
                json.dumps(
                    {
                        "schemaVersion": 2,
                        "mediaType": "application/vnd.oci.image.index.v1+json",
                        "manifests": found,
                    }
                ).encode(),
                "application/vnd.oci.image.index.v1+json",
            )
        store = (
            self.blobs if kind == "blobs" else {d: raw for d, (raw, _) in self.manifests.items()}
        )
        if kind == "manifests" and not ref.startswith("sha256:"):
            ref = self.tags.get(ref, "")
        if ref not in store:
            return self._send(404)
        ctype = (
            json.loads(store[ref]).get("mediaType", "")
            if kind == "manifests"
            else "application/octet-stream"
        )
        return self._send(200, store[ref], ctype, {"Docker-Content-Digest": ref})

    def do_POST(self):
        self._send(202, headers={"Location": "/v2/r/blobs/uploads/u1"})

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        if "/blobs/uploads/" in self.path:
            self.blobs[self.path.split("digest=")[1]] = body
            return self._send(201)
        doc = json.loads(body)
        self.manifests[digest] = (body, doc)
        ref = self.path.split("/")[-1]
        if not ref.startswith("sha256:"):
            self.tags[ref] = digest
        self._send(201, headers={"Docker-Content-Digest": digest})

    def log_message(self, *args):
        pass


@pytest.fixture
def oci11(monkeypatch):
    OCI11.blobs, OCI11.manifests, OCI11.tags, OCI11.referrers_api = {}, {}, {}, True
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), OCI11)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"127.0.0.1:{server.server_port}"
    monkeypatch.setenv("VALORCH_REGISTRY_ENDPOINTS", f"{host}=http://{host}")
    image = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {},
            "layers": [],
        }
    ).encode()
    digest = "sha256:" + hashlib.sha256(image).hexdigest()
    OCI11.manifests[digest] = (image, json.loads(image))
    OCI11.tags["v1"] = digest
    yield parse(f"{host}/r:v1"), digest
    server.shutdown()
    server.server_close()


def test_referrers_api_is_detected_and_used(oci11):
    ref, digest = oci11
    client = RegistryClient()
    assert artifacts.referrers(client, ref, digest) is not None
    env = json.dumps(
        {"payloadType": "x", "payload": base64.b64encode(b"{}").decode(), "signatures": []}
    )
    (pushed,) = artifacts.attach(client, ref, digest, [(intoto.TEST_RESULT, env)])
    assert pushed.mode == "referrers" and pushed.where.endswith(f"@{pushed.manifest_digest}")
    _, doc = OCI11.manifests[pushed.manifest_digest]
    assert doc["subject"]["digest"] == digest and doc["artifactType"] == artifacts.DSSE
    assert not OCI11.tags.get(artifacts.att_tag(digest))  # no fallback tag where the API exists
    found, looked = artifacts.fetch(client, ref, digest)
    assert [raw for _, raw in found] == [env.encode()] and "referrers API" in looked


def test_without_referrers_api_the_att_tag_is_used(oci11):
    ref, digest = oci11
    OCI11.referrers_api = False
    client = RegistryClient()
    assert artifacts.referrers(client, ref, digest) is None
    (pushed,) = artifacts.attach(client, ref, digest, [(intoto.TEST_RESULT, "{}")])
    assert pushed.mode == "tag" and pushed.where.endswith(":" + digest.replace(":", "-") + ".att")
    found, looked = artifacts.fetch(client, ref, digest)
    assert [raw for _, raw in found] == [b"{}"] and looked == f"tag {artifacts.att_tag(digest)}"


def test_untrusted_envelopes_that_are_not_statements_are_refused_not_crashed():
    from securesystemslib.signer import CryptoSigner

    from orchestrator.ext.attest import signing

    signer = CryptoSigner.generate_ed25519()
    for env in (
        [],
        {"payload": "!!"},
        {"payload": "e30=", "payloadType": "x", "signatures": ["s"]},
    ):
        assert not signing.check(env, signer.public_key).ok
    ok = signing.check(signing.sign(b"[1]", "x", signer), signer.public_key)
    (seen,) = verify.decode(
        [("reg/x#0", json.dumps(signing.sign(b"[1]", "x", signer)).encode())], signer.public_key
    )
    assert ok.ok and seen.statement == [1]
    d = _decide([seen.statement])
    assert (d.attestations[0].role, d.attestations[0].summary) == (
        "rejected",
        "not an in-toto Statement v1",
    )
    assert [r.code for r in d.reasons] == ["none"] and d.exit_code == 1
    other = CryptoSigner.generate_ed25519()
    assert signing.check(signing.sign(b"{}", "x", signer), other.public_key).reason.startswith(
        "wrong key"
    )


def test_attestation_files_replace_links(tmp_path):
    from orchestrator.ext.attest import service

    made = service.Made("reg/x", DIGEST, intoto.TEST_RESULT, "PASSED", {"payload": "e30="})
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (out / f"{DIGEST.replace(':', '-')}.intoto.jsonl").symlink_to(victim)
    done, files = service._write([made], out)
    assert victim.read_text() == "keep" and [p.is_symlink() for p in files] == [False]
    assert [json.loads(p.read_text()) for p in files] == [{"payload": "e30="}]
    assert done[0].file == str(files[0]) and sorted(p.name for p in out.iterdir()) == [
        files[0].name
    ]
