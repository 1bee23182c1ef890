import pytest

from orchestrator.errors import SpecError
from orchestrator.executors.docker import client_kwargs
from orchestrator.hosts.inventory import load_hosts, resolve_hosts
from orchestrator.spec import HostSpec, TLSSpec

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def test_example_inventory_loads_with_local_detection():
    hosts = load_hosts(ROOT / "examples" / "hosts.yaml")
    assert [h.name for h in hosts] == ["local"] and hosts[0].slots == 2 and "cpu" in hosts[0].labels


def test_tls_paths_are_relative_to_the_file(tmp_path):
    for f in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / "certs").mkdir(exist_ok=True)
        (tmp_path / "certs" / f).write_text("x")
    (tmp_path / "h.yaml").write_text(
        "- name: remote\n  endpoint: tcp://10.0.0.2:2376\n"
        "  tls: {ca: certs/ca.pem, cert: certs/cert.pem, key: certs/key.pem}\n  slots: 3\n"
    )
    (host,) = load_hosts(tmp_path / "h.yaml")
    assert host.tls.ca == str(tmp_path / "certs" / "ca.pem") and host.slots == 3


@pytest.mark.parametrize(
    "text,where",
    [
        ("hosts:\n  - name: a\n    slotz: 2\n", ":3: host a: key 'slotz': unknown key"),
        ("hosts:\n  - name: a\n  - name: a\n", ":3: host inventory: duplicate host name 'a'"),
        ("- name: a\n  endpoint: http://x\n", ":2: host a: key 'endpoint'"),
        (
            "- name: a\n  endpoint: tcp://x:1\n  tls: {ca: nope, cert: nope, key: nope}\n",
            "key 'tls.ca': no such file",
        ),
        ("- name: a\n  slots: 0\n", ":2: host a: key 'slots'"),
        ("hosts: []\n", "expected a non-empty list"),
    ],
)
def test_errors_name_file_line_and_key(tmp_path, text, where):
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as exc:
        load_hosts(path)
    assert str(path) in str(exc.value) and where in str(exc.value)


def test_env_variable_names_the_inventory(tmp_path, monkeypatch):
    (tmp_path / "h.yaml").write_text("- name: only\n  slots: 4\n")
    monkeypatch.setenv("VALORCH_HOSTS", str(tmp_path / "h.yaml"))
    assert [h.name for h in resolve_hosts(None)] == ["only"]


def test_client_kwargs_per_endpoint(tmp_path):
    ssh = client_kwargs(HostSpec(name="s", endpoint="ssh://ci@box"))
    assert ssh["use_ssh_client"] is True and "tls" not in ssh
    for f in ("ca", "cert", "key"):
        (tmp_path / f).write_text("x")
    tls = TLSSpec(ca=str(tmp_path / "ca"), cert=str(tmp_path / "cert"), key=str(tmp_path / "key"))
    kw = client_kwargs(HostSpec(name="t", endpoint="tcp://127.0.0.1:2376", tls=tls))
    assert kw["tls"].cert == (str(tmp_path / "cert"), str(tmp_path / "key")) and kw[
        "tls"
    ].ca_cert == str(tmp_path / "ca")
    assert "tls" not in client_kwargs(HostSpec(name="u"))
