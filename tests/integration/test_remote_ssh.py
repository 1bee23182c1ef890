"""The docker executor against an engine reached over ssh://, with the same
executor code as unix:// and tcp://+TLS.

A private sshd (its own config, host key, pid file and authorized_keys in a tmp dir,
listening on 127.0.0.1 only) forwards a throwaway key's sessions to the second engine
(``engine2`` in conftest.py): the key's forced command is ``docker -H unix://<engine2
socket> system dial-stdio``, whatever the client asks for. The Docker SDK shells out to
the system ``ssh`` client; valorch's subprocess finds an ``ssh`` wrapper first on its
PATH that adds ``-F <tmp ssh_config>`` (OpenSSH reads ~/.ssh from the passwd entry, not
$HOME), so the user's ~/.ssh is never touched. Only that sshd's pid is stopped.
"""

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import time

import pytest
from tlscerts import free_port


def _ensure_openssh() -> None:
    if os.path.exists("/usr/sbin/sshd") and shutil.which("ssh") and shutil.which("ssh-keygen"):
        return
    if os.geteuid() != 0:
        pytest.skip("openssh-server/openssh-client are missing and installing them needs root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-qq", "openssh-server", "openssh-client"]
    if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, check=True)
        subprocess.run(install, env=env, capture_output=True, check=True)


@pytest.fixture(scope="module")
def ssh_engine(engine2, tmp_path_factory):
    """engine2 behind a private sshd: endpoint, the env for valorch's subprocess, the socket."""
    _ensure_openssh()
    d = tmp_path_factory.mktemp("ssh")
    for name in ("host_key", "client_key", "stranger_key"):
        subprocess.run(
            [
                "ssh-keygen",
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                f"valorch-test-{name}",
                "-f",
                str(d / name),
            ],
            check=True,
            capture_output=True,
        )
    sock = engine2["sock"]
    forced = f'restrict,command="docker -H unix://{sock} system dial-stdio"'
    (d / "authorized_keys").write_text(f"{forced} {(d / 'client_key.pub').read_text()}")
    port = free_port()
    (d / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host_key'}\nPidFile {d / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nUsePAM no\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nStrictModes no\n"
    )
    envs = {}
    for who in ("client", "stranger"):  # the stranger's key is not in authorized_keys
        (d / f"{who}_config").write_text(
            f"Host 127.0.0.1\n  Port {port}\n  IdentityFile {d / f'{who}_key'}\n  IdentitiesOnly yes\n"
            "  BatchMode yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
        )
        bin_dir = d / f"{who}_bin"
        bin_dir.mkdir()
        wrapper = bin_dir / "ssh"
        wrapper.write_text(f'#!/bin/sh\nexec {shutil.which("ssh")} -F {d / f"{who}_config"} "$@"\n')
        wrapper.chmod(0o755)
        envs[who] = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
    log = open(d / "sshd.log", "w")  # noqa: SIM115 (closed in the finally below)
    proc = subprocess.Popen(
        ["/usr/sbin/sshd", "-D", "-e", "-f", str(d / "sshd_config")],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(60):
            if proc.poll() is not None:
                pytest.fail(f"sshd exited: {(d / 'sshd.log').read_text()[-2000:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.25)
        yield {
            "endpoint": f"ssh://root@127.0.0.1:{port}",
            "env": envs["client"],
            "stranger_env": envs["stranger"],
            "sock": sock,
        }
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def ssh_hosts(ssh_engine, tmp_path):
    path = tmp_path / "hosts.yaml"
    path.write_text(f"- name: over-ssh\n  endpoint: {ssh_engine['endpoint']}\n  slots: 1\n")
    return path


def _engine2(ssh_engine, *args):
    return subprocess.run(
        ["docker", "-H", f"unix://{ssh_engine['sock']}", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_ssh_wrapper_reaches_engine2_through_the_forced_command(ssh_engine):
    # what the SDK runs, by hand: the requested command is replaced by the forced dial-stdio
    res = subprocess.run(
        [
            "ssh",
            "-l",
            "root",
            "-p",
            ssh_engine["endpoint"].rsplit(":", 1)[1],
            "--",
            "127.0.0.1",
            "docker system dial-stdio",
        ],
        input="GET /_ping HTTP/1.0\r\n\r\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **ssh_engine["env"]},
        check=False,
    )
    assert res.stdout.startswith("HTTP/1.0 200 OK") and res.stdout.endswith("OK"), (
        res.stdout,
        res.stderr,
    )


def test_run_on_an_ssh_engine(cli, ssh_engine, ssh_hosts):
    since = str(int(time.time()) - 1)
    res = cli(
        "run",
        "--hosts",
        str(ssh_hosts),
        "--image",
        "cpu_debian12_py3.11",
        "--json",
        env=ssh_engine["env"],
    )
    assert res.returncode == 0, res.stderr[-3000:]
    (run,) = json.loads(res.stdout)
    assert run["host"] == "over-ssh" and run["counts"].get("pass", 0) > 0, run
    assert not {"fail", "crash", "timeout", "error"} & set(run["counts"]), run
    # the image the engine behind ssh holds (loaded into engine2 by its fixture) is the one reported
    engine2_id = _engine2(
        ssh_engine, "image", "inspect", "-f", "{{.Id}}", "valorch/base:bookworm"
    ).strip()
    assert run["image"]["digest"] == engine2_id
    con = sqlite3.connect(cli.db)
    stored = con.execute(
        "SELECT host.name, COUNT(result.id) FROM result JOIN run ON result.run_id = run.id "
        "JOIN host ON run.host_id = host.id GROUP BY host.name"
    ).fetchall()
    assert (
        len(stored) == 1
        and stored[0][0] == "over-ssh"
        and stored[0][1] == sum(run["counts"].values())
    )
    # the probe container was created on engine2 (through sshd), and removed there
    created = _engine2(
        ssh_engine,
        "events",
        "--since",
        since,
        "--until",
        str(int(time.time()) + 1),
        "--filter",
        f"label=org.valorch.run={run['run']}",
        "--filter",
        "event=create",
        "--format",
        "{{.Actor.ID}}",
    ).split()
    assert len(created) == 1
    assert _engine2(ssh_engine, "ps", "-aq", "--filter", "label=org.valorch").split() == []


def test_hosts_check_on_an_ssh_engine(cli, ssh_engine, ssh_hosts):
    res = cli(
        "hosts",
        "check",
        "--hosts",
        str(ssh_hosts),
        "--image",
        "cpu_debian12_py3.11",
        "--json",
        env=ssh_engine["env"],
    )
    assert res.returncode == 0, res.stderr[-3000:]
    report = json.loads(res.stdout)
    (host,) = report["hosts"]
    assert host["host"] == "over-ssh" and host["engine"] and host["free_gib"] > 0
    assert host["images"] == {"valorch/base:bookworm": "ok"}


def test_ssh_engine_refusing_the_key_is_an_infrastructure_error(cli, ssh_engine, ssh_hosts):
    # a key the sshd does not know: valorch says the engine does not answer, exit 3, no traceback
    res = cli(
        "hosts",
        "check",
        "--hosts",
        str(ssh_hosts),
        "--image",
        "cpu_debian12_py3.11",
        "--json",
        env=ssh_engine["stranger_env"],
    )
    assert res.returncode == 3, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    (host,) = json.loads(res.stdout)["hosts"]
    assert "engine" not in host and any("does not answer" in p for p in host["problems"]), host
