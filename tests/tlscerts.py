"""Throwaway TLS material made with openssl for the tests' own servers (a second Docker
engine with mutual TLS, a registry), and free ports on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

# strict X.509 checks (recent Python ssl) want key usages and the authority key id
LEAF = "authorityKeyIdentifier=keyid,issuer\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
SERVER_EXT = LEAF + "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
CLIENT_EXT = LEAF + "extendedKeyUsage=clientAuth\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def openssl(d: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)


def self_signed(d: Path, cn: str, key: str, cert: str, *, ca: bool = False) -> None:
    """A self-signed certificate (a CA's with ``ca``) valid for two days."""
    usage = ["-addext", "basicConstraints=critical,CA:TRUE"]
    usage += ["-addext", "keyUsage=critical,keyCertSign,cRLSign"]
    argv = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={cn}"]
    openssl(d, *argv, *(usage if ca else []), "-keyout", key, "-out", cert)


def signed(
    d: Path, cn: str, key: str, cert: str, *, ca: tuple[str, str], ext: str, name: str
) -> None:
    """A key and a certificate for ``cn`` signed by ``ca`` (certificate, key), with the
    extensions ``ext`` (written to ``name``.ext)."""
    (d / f"{name}.ext").write_text(ext)
    csr = f"{name}.csr"
    openssl(
        d, "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={cn}", "-keyout", key, "-out", csr
    )
    sign = ["x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial"]
    openssl(d, *sign, "-days", "2", "-extfile", f"{name}.ext", "-out", cert)
