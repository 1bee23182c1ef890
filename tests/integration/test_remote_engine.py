"""A second, real Docker engine reached over tcp:// with mutual TLS (certificates made
here with openssl), next to the local one: valorch runs one job across both.

The second dockerd has its own socket, data root, exec root, pid file and bridge
(not docker0) and no iptables rules, so it does not disturb the first; it is stopped (its pid only)
at the end of the session (fixture ``engine2`` in conftest.py).
"""

import itertools
import json
import sqlite3

import pytest
from tlscerts import free_port


@pytest.fixture
def inventory(engine2, tmp_path):
    c = engine2["certs"]
    path = tmp_path / "hosts.yaml"
    path.write_text(f"""hosts:
  - name: local
    endpoint: unix:///var/run/docker.sock
    slots: 2
  - name: engine2
    endpoint: tcp://127.0.0.1:{engine2["port"]}
    tls: {{ca: {c}/ca.pem, cert: {c}/client.pem, key: {c}/client-key.pem}}
    slots: 2
""")
    return path


def test_job_runs_across_local_and_tls_engine(cli, inventory, tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(
        "name: two-engines\nimages: [cpu_debian12_py3.11, cpu_debian11_py3.9]\n"
        "suites: [smoke, {name: selftest, deadline: 5}]\n"
    )
    res = cli("run", "--job", str(job), "--hosts", str(inventory), "--json", "--no-gate")
    assert res.returncode == 0, res.stderr[-3000:]
    runs = json.loads(res.stdout)
    assert {r["host"] for r in runs} == {"local", "engine2"}
    con = sqlite3.connect(cli.db)
    hosts = {
        h
        for (h,) in con.execute(
            "SELECT DISTINCT host.name FROM result JOIN run ON result.run_id = run.id JOIN host ON run.host_id = host.id"
        )
    }
    assert hosts == {"local", "engine2"}
    tasks = con.execute("SELECT state, started, ended FROM task").fetchall()
    assert len(tasks) == 4 and {t[0] for t in tasks} == {"done"}
    # several tasks ran at the same time: some task started before another one ended
    spans = sorted((t[1], t[2]) for t in tasks)
    assert any(b[0] < a[1] for a, b in itertools.pairwise(spans))
    dupes = con.execute(
        "SELECT run_id, check_pk, attempt, COUNT(*) FROM result GROUP BY 1, 2, 3 "
        "HAVING COUNT(*) > 1"
    ).fetchall()
    assert dupes == []


def test_hosts_check_and_probe_on_the_tls_engine(cli, inventory):
    res = cli(
        "hosts",
        "check",
        "--hosts",
        str(inventory),
        "--image",
        "cpu_debian12_py3.11",
        "--image",
        "cpu_debian12_py3.11_pytorch_1.13",
        "--json",
    )
    report = json.loads(res.stdout)
    by = {r["host"]: r for r in report["hosts"]}
    assert by["engine2"]["engine"] and by["engine2"]["free_gib"] > 0
    assert by["engine2"]["images"]["valorch/base:bookworm"] == "ok"
    # the torch image was not loaded into the second engine: the preflight says so and exits 3
    assert by["engine2"]["images"]["valorch/test:debian-torch"] == "missing"
    assert by["local"]["images"]["valorch/test:debian-torch"] == "ok"
    assert res.returncode == 3 and report["db"] == "ok"
    res = cli("hosts", "probe", "engine2", "--hosts", str(inventory), "--json")
    assert res.returncode == 0, res.stderr
    (host,) = json.loads(res.stdout)
    assert host["name"] == "engine2" and host["gpus"] == [] and host["kernel"]


def test_unreachable_engine_is_retried_on_the_other_host(cli, engine2, tmp_path):
    c = engine2["certs"]
    inv = tmp_path / "hosts.yaml"
    # "dead" is listed first with more slots, so placement sends it work; its engine does not answer
    inv.write_text(f"""- name: dead
  endpoint: tcp://127.0.0.1:{free_port()}
  tls: {{ca: {c}/ca.pem, cert: {c}/client.pem, key: {c}/client-key.pem}}
  slots: 4
- name: engine2
  endpoint: tcp://127.0.0.1:{engine2["port"]}
  tls: {{ca: {c}/ca.pem, cert: {c}/client.pem, key: {c}/client-key.pem}}
  slots: 1
""")
    res = cli("run", "--image", "cpu_debian12_py3.11", "--hosts", str(inv), "--json", "--no-gate")
    assert res.returncode == 0, res.stderr[-3000:]
    (run,) = json.loads(res.stdout)
    assert run["host"] == "engine2" and run["counts"].get("pass", 0) > 0
    con = sqlite3.connect(cli.db)
    assert con.execute("SELECT tries, state FROM task").fetchall() == [(2, "done")]
    assert con.execute("SELECT COUNT(*) FROM run").fetchone() == (1,)
