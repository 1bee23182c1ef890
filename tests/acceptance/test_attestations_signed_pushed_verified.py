"""valorch attest / verify through the real CLI, the real engine and the real local registry
(distribution 2.8, which has no referrers API: the cosign ``sha256-<hex>.att`` tag is used).

An image is pushed to the test registry and run from there (so the run records the digest
the registry serves); its run is attested, pushed, verified, tampered with and rejected;
the signature is checked independently with openssl over DSSE's PAE."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from registry_support import SMALL, registry_basic, run_cli  # noqa: F401 (pytest fixtures: requested by name)
from tlscerts import free_port

pytestmark = pytest.mark.docker

PAYLOAD_TYPE = "application/vnd.in-toto+json"


def keypair(d: Path, kind: str) -> tuple[Path, Path]:
    d.mkdir(parents=True, exist_ok=True)
    key, pub = d / f"{kind}.key", d / f"{kind}.pub"
    algo = (
        ["-algorithm", "ed25519"]
        if kind == "ed25519"
        else ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
        if kind == "p256"
        else ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"]
        if kind == "p384"
        else ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
    )
    subprocess.run(["openssl", "genpkey", *algo, "-out", str(key)], check=True, capture_output=True)
    subprocess.run(
        ["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(pub)],
        check=True,
        capture_output=True,
    )
    return key, pub


@pytest.fixture(scope="module")
def world(registry_basic, tmp_path_factory):  # noqa: F811 (the parameter is the fixture imported above)
    """Two images in the registry, each run once (selftest.pass) into one store."""
    reg = registry_basic
    tmp = tmp_path_factory.mktemp("attest")
    db = tmp / "v.sqlite"
    env = {**reg.env(), "VALORCH_DB": str(db)}
    refs, runs = {}, {}
    for name, local in (("one", SMALL), ("two", "valorch/base:bullseye")):
        digest = reg.push(local, f"attest/{name}:v1")
        refs[name] = (f"{reg.host}/attest/{name}:v1", digest)
        proc = run_cli(
            "run",
            "--image",
            refs[name][0],
            "--suite",
            "selftest",
            "--check",
            "selftest.pass",
            "--no-matrix",
            "--json",
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        (run,) = [
            r
            for r in json.loads(run_cli("results", "list", "--json", env=env).stdout)
            if r["digest"] == digest
        ]
        runs[name] = run["run"]
    return {
        "reg": reg,
        "tmp": tmp,
        "env": env,
        "refs": refs,
        "runs": runs,
        "ed": keypair(tmp / "keys", "ed25519"),
        "p256": keypair(tmp / "keys", "p256"),
        "other": keypair(tmp / "keys2", "ed25519"),
    }


def attest(w, run: str, key: Path, out: Path, *flags: str) -> subprocess.CompletedProcess:
    """``valorch attest --run RUN --key KEY --out-dir OUT [FLAGS]`` against the world's store."""
    return run_cli(
        "attest", "--run", run, "--key", str(key), "--out-dir", str(out), *flags, env=w["env"]
    )


def att_manifest(w, name):
    reg = w["reg"]
    _, digest = w["refs"][name]
    return requests.get(
        f"https://{reg.host}/v2/attest/{name}/manifests/{digest.replace(':', '-')}.att",
        auth=reg.auth(),
        verify=str(reg.ca),
        headers={"Accept": "application/vnd.oci.image.manifest.v1+json"},
    )


def test_attest_push_verify_and_openssl(world):
    w = world
    key, pub = w["ed"]
    out = w["tmp"] / "att"
    proc = attest(w, w["runs"]["one"][:8], key, out, "--push", "--json")
    assert proc.returncode == 0, proc.stderr
    (made,) = json.loads(proc.stdout)
    ref, digest = w["refs"]["one"]
    assert made["digest"] == digest and made["result"] == "PASSED"
    assert made["pushed"].endswith(
        f"/attest/one:{digest.replace(':', '-')}.att"
    )  # no referrers API: the tag
    # .intoto.jsonl: one DSSE envelope per line, its payload an in-toto Statement v1 about the digest
    (line,) = Path(made["file"]).read_text().splitlines()
    env = json.loads(line)
    assert env["payloadType"] == PAYLOAD_TYPE
    body = base64.b64decode(env["payload"])
    stmt = json.loads(body)
    assert stmt["_type"] == "https://in-toto.io/Statement/v1"
    assert stmt["subject"] == [
        {"name": ref.rsplit(":", 1)[0], "digest": {"sha256": digest.split(":")[1]}}
    ]
    assert stmt["predicateType"] == "https://in-toto.io/attestation/test-result/v0.1"
    pred = stmt["predicate"]
    assert pred["result"] == "PASSED" and pred["passedTests"] == ["selftest.pass"]
    assert pred["failedTests"] == [] and pred["warnedTests"] == []
    conf = pred["configuration"][0]["annotations"]
    assert (
        conf["suites"] == "selftest"
        and conf["hostClass"] == "cpu"
        and conf["runs"] == w["runs"]["one"]
    )
    # the independent check: openssl verifies the signature over DSSE's PAE
    pae = b"DSSEv1 %d %b %d %b" % (len(PAYLOAD_TYPE), PAYLOAD_TYPE.encode(), len(body), body)
    (w["tmp"] / "pae.bin").write_bytes(pae)
    (w["tmp"] / "sig.bin").write_bytes(base64.b64decode(env["signatures"][0]["sig"]))
    ossl = subprocess.run(
        [
            "openssl",
            "pkeyutl",
            "-verify",
            "-pubin",
            "-inkey",
            str(pub),
            "-rawin",
            "-in",
            str(w["tmp"] / "pae.bin"),
            "-sigfile",
            str(w["tmp"] / "sig.bin"),
        ],
        capture_output=True,
        text=True,
    )
    assert ossl.returncode == 0 and "Signature Verified Successfully" in ossl.stdout, (
        ossl.stdout + ossl.stderr
    )
    # the registry holds the .att manifest with the envelope as a DSSE layer, as cosign writes it
    m = att_manifest(w, "one").json()
    assert [layer["mediaType"] for layer in m["layers"]] == [
        "application/vnd.dsse.envelope.v1+json"
    ]
    assert m["layers"][0]["annotations"]["predicateType"] == stmt["predicateType"]
    # verify: by tag, by digest, and with a check glob
    for image, require in (
        (ref, "passed"),
        (f"{ref.rsplit(':', 1)[0]}@{digest}", "passed:selftest.*"),
    ):
        v = run_cli(
            "verify", "--image", image, "--key", str(pub), "--require", require, env=w["env"]
        )
        assert v.returncode == 0, v.stderr
        assert "verified" in v.stdout and digest in v.stdout
    v = run_cli(
        "verify", "--image", ref, "--key", str(pub), "--require", "passed:smoke.*", env=w["env"]
    )
    assert v.returncode == 1 and "no passed check matches smoke.*" in v.stderr
    v = run_cli("verify", "--image", ref, "--key", str(pub), "--require", "qualified", env=w["env"])
    assert v.returncode == 1 and "no signed verification summary (VSA)" in v.stderr
    # stored in the results store beside the run: attesting again appends, the tag keeps both
    again = attest(w, w["runs"]["one"], key, out, "--push")
    assert again.returncode == 0, again.stderr
    assert len(att_manifest(w, "one").json()["layers"]) == 2


def test_ecdsa_p256_signature_verifies_with_openssl_dgst(world):
    w = world
    key, pub = w["p256"]
    proc = attest(w, w["runs"]["two"], key, w["tmp"] / "p256", "--json")
    assert proc.returncode == 0, proc.stderr
    env = json.loads(Path(json.loads(proc.stdout)[0]["file"]).read_text().splitlines()[0])
    body = base64.b64decode(env["payload"])
    (w["tmp"] / "pae2.bin").write_bytes(
        b"DSSEv1 %d %b %d %b" % (len(PAYLOAD_TYPE), PAYLOAD_TYPE.encode(), len(body), body)
    )
    (w["tmp"] / "sig2.der").write_bytes(base64.b64decode(env["signatures"][0]["sig"]))
    ossl = subprocess.run(
        [
            "openssl",
            "dgst",
            "-sha256",
            "-verify",
            str(pub),
            "-signature",
            str(w["tmp"] / "sig2.der"),
            str(w["tmp"] / "pae2.bin"),
        ],
        capture_output=True,
        text=True,
    )
    assert ossl.returncode == 0 and "Verified OK" in ossl.stdout, ossl.stdout + ossl.stderr


def _push_att(w, name, layers_data: list[bytes]):
    """Replace image ``name``'s .att manifest with these envelopes (as an attacker with push rights would)."""
    import hashlib

    reg = w["reg"]
    base = f"https://{reg.host}/v2/attest/{name}"
    kw = {"auth": reg.auth(), "verify": str(reg.ca)}
    layers = []
    for data in [*layers_data, b"{}"]:
        d = "sha256:" + hashlib.sha256(data).hexdigest()
        loc = requests.post(f"{base}/blobs/uploads/", **kw).headers["Location"]
        loc = loc if loc.startswith("http") else f"https://{reg.host}{loc}"
        r = requests.put(f"{loc}{'&' if '?' in loc else '?'}digest={d}", data=data, **kw)
        assert r.status_code == 201, r.text
        layers.append(
            {"mediaType": "application/vnd.dsse.envelope.v1+json", "digest": d, "size": len(data)}
        )
    config = layers.pop()
    config["mediaType"] = "application/vnd.oci.image.config.v1+json"
    doc = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config,
        "layers": layers,
    }
    _, digest = w["refs"][name]
    r = requests.put(
        f"{base}/manifests/{digest.replace(':', '-')}.att",
        data=json.dumps(doc),
        **kw,
        headers={"Content-Type": doc["mediaType"]},
    )
    assert r.status_code == 201, r.text


def test_tampered_wrong_key_subject_mismatch_expired_are_rejected(world):
    w = world
    key, pub = w["ed"]
    proc = attest(w, w["runs"]["one"], key, w["tmp"] / "t", "--json")
    assert proc.returncode == 0, proc.stderr
    good = Path(json.loads(proc.stdout)[0]["file"]).read_text().splitlines()[0].encode()
    ref_two = w["refs"]["two"][0]
    # tampered: a failed check turned into a pass inside the signed payload
    env = json.loads(good)
    stmt = json.loads(base64.b64decode(env["payload"]))
    stmt["subject"][0]["digest"]["sha256"] = w["refs"]["two"][1].split(":")[1]
    stmt["predicate"]["passedTests"].append("kernels.matmul.bf16")
    env["payload"] = base64.b64encode(json.dumps(stmt).encode()).decode()
    _push_att(w, "two", [json.dumps(env).encode()])
    v = run_cli("verify", "--image", ref_two, "--key", str(pub), env=w["env"])
    assert v.returncode == 1 and "tampered" in v.stderr, v.stderr
    # subject mismatch: image one's genuine attestation attached to image two
    _push_att(w, "two", [good])
    v = run_cli("verify", "--image", ref_two, "--key", str(pub), env=w["env"])
    assert (
        v.returncode == 1 and "subject mismatch" in v.stderr and w["refs"]["two"][1] in v.stderr
    ), v.stderr
    # wrong key
    ref_one = w["refs"]["one"][0]
    run_cli(
        "attest",
        "--run",
        w["runs"]["one"],
        "--key",
        str(key),
        "--push",
        "--out-dir",
        str(w["tmp"] / "t2"),
        env=w["env"],
    )
    v = run_cli("verify", "--image", ref_one, "--key", str(w["other"][1]), env=w["env"])
    assert v.returncode == 1 and "wrong key" in v.stderr, v.stderr
    # expired: made before now, older than --max-age 1s
    time.sleep(1.5)
    v = run_cli("verify", "--image", ref_one, "--key", str(pub), "--max-age", "1s", env=w["env"])
    assert v.returncode == 1 and "expired" in v.stderr, v.stderr
    v = run_cli("verify", "--image", ref_one, "--key", str(pub), "--max-age", "30d", env=w["env"])
    assert v.returncode == 0, v.stderr


def test_bad_input_exits_2_or_3_and_pushes_nothing(world):
    w = world
    reg = w["reg"]
    run_two = w["runs"]["two"]
    before = att_manifest(w, "two").status_code, att_manifest(w, "two").text
    cases = [
        (w["tmp"] / "no-such.pem", "no such file"),
        (w["tmp"], "is a directory"),
        (w["ed"][1], "is a public key"),
    ]
    garbage = w["tmp"] / "garbage.pem"
    garbage.write_text(
        "-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n"
    )
    cases.append((garbage, "not a PEM private key"))
    for kind in ("rsa", "p384"):
        cases.append((keypair(w["tmp"] / "bad", kind)[0], "unsupported key type"))
    for key, words in cases:
        p = run_cli(
            "attest",
            "--run",
            run_two,
            "--key",
            str(key),
            "--push",
            "--out-dir",
            str(w["tmp"] / "bad-out"),
            env=w["env"],
        )
        assert p.returncode == 2 and words in p.stderr, (key, p.stderr)
        assert "Traceback" not in p.stderr
    assert (
        att_manifest(w, "two").status_code,
        att_manifest(w, "two").text,
    ) == before  # nothing pushed
    assert not (w["tmp"] / "bad-out").exists()
    # verify of an image nobody attested
    digest = reg.push("valorch/base:bullseye", "attest/unsigned:v1")
    p = run_cli(
        "verify",
        "--image",
        f"{reg.host}/attest/unsigned:v1",
        "--key",
        str(w["ed"][1]),
        env=w["env"],
    )
    assert p.returncode == 2 and "has no attestations" in p.stderr and digest in p.stderr, p.stderr
    # a registry nobody answers at
    p = run_cli(
        "verify",
        "--image",
        f"127.0.0.1:{free_port()}/attest/one:v1",
        "--key",
        str(w["ed"][1]),
        env=w["env"],
    )
    assert p.returncode == 3 and "unreachable" in p.stderr, p.stderr
    p = run_cli(
        "verify",
        "--image",
        w["refs"]["one"][0],
        "--key",
        str(w["ed"][1]),
        "--require",
        "green",
        env=w["env"],
    )
    assert p.returncode == 2 and "--require green" in p.stderr
    p = run_cli("attest", "--run", "ffffffff", "--key", str(w["ed"][0]), env=w["env"])
    assert p.returncode == 2 and "no such run" in p.stderr


def test_attest_of_a_run_still_running_is_refused(world):
    w = world
    env = dict(w["env"])
    db = w["tmp"] / "running.sqlite"
    env["VALORCH_DB"] = str(db)
    import os

    from registry_support import VALORCH

    full = {**os.environ, **env}
    proc = subprocess.Popen(
        [
            VALORCH,
            "run",
            "--image",
            "valorch/base:bookworm",
            "--suite",
            "selftest",
            "--check",
            "selftest.hang",
            "--deadline",
            "120",
            "--no-matrix",
        ],
        env=full,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        run = None
        for _ in range(600):
            listed = run_cli("results", "list", "--json", env=env)
            rows = (
                json.loads(listed.stdout)
                if listed.returncode == 0 and listed.stdout.strip()
                else []
            )
            if rows:
                run = rows[0]
                break
            time.sleep(0.2)
        assert run is not None and run["state"] == "running"
        p = run_cli(
            "attest",
            "--run",
            run["run"],
            "--key",
            str(w["ed"][0]),
            "--out-dir",
            str(w["tmp"] / "r"),
            env=env,
        )
        assert p.returncode == 2 and "still running" in p.stderr, p.stderr
        assert not (w["tmp"] / "r").exists()
    finally:
        proc.terminate()
        proc.wait(timeout=120)


def _cosign(w, *args: str, pub: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["cosign", "verify-attestation", "--key", str(pub), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(w["tmp"]),
            "DOCKER_CONFIG": w["env"]["DOCKER_CONFIG"],  # the registry's credentials
            "SSL_CERT_FILE": str(w["reg"].ca),  # and its CA
        },
    )


def test_cosign_verify_attestation_accepts_what_valorch_pushed(world):
    """The independent consumer: cosign (what deploy policies call) reads the ``.att`` tag
    valorch pushed, verifies the DSSE signature with the user's public key and the
    predicate type, and prints the statement; another key is refused."""
    if shutil.which("cosign") is None:
        pytest.skip("cosign is not installed: scripts/install-cosign.sh (CI runs it)")
    w = world
    key, pub = w["p256"]
    proc = attest(w, w["runs"]["two"], key, w["tmp"] / "cosign", "--push", "--json")
    assert proc.returncode == 0, proc.stderr
    ref, digest = w["refs"]["two"]
    image = f"{ref.rsplit(':', 1)[0]}@{digest}"
    ok = _cosign(
        w,
        "--type",
        "https://in-toto.io/attestation/test-result/v0.1",
        "--insecure-ignore-tlog=true",
        image,
        pub=pub,
    )
    assert ok.returncode == 0, ok.stderr
    (envelope,) = [json.loads(line) for line in ok.stdout.splitlines() if line.strip()]
    stmt = json.loads(base64.b64decode(envelope["payload"]))
    assert stmt["subject"][0]["digest"] == {"sha256": digest.split(":")[1]}
    assert stmt["predicate"]["result"] == "PASSED"
    assert "The signatures were verified against the specified public key" in ok.stderr
    _, other = w["other"]
    refused = _cosign(
        w,
        "--type",
        "https://in-toto.io/attestation/test-result/v0.1",
        "--insecure-ignore-tlog=true",
        image,
        pub=other,
    )
    assert refused.returncode != 0 and "no matching attestations" in refused.stderr.lower(), (
        refused.stderr
    )
