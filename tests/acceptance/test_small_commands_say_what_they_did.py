"""Small commands say what they did, in the words the user typed: completion prints the
script of the shell named (``--show-completion zsh`` and ``=zsh``); ``images list`` never
cuts an alias, piped or not; ``images pull`` of local images says each is not pulled and
why, and refuses ``--pull never``; the probe-image hint names ``--probe-image``."""

import json

import pytest
from root_helpers import run_cli

pytestmark = pytest.mark.cli


@pytest.mark.parametrize(
    "shell,marker",
    [("zsh", "#compdef valorch"), ("fish", "complete --command valorch"), ("bash", "complete -o")],
)
def test_completion_prints_the_named_shell(shell, marker):
    for argv in (["--show-completion", shell], [f"--show-completion={shell}"]):
        done = run_cli(*argv)
        assert done.returncode == 0, done.stderr
        assert marker in done.stdout, (argv, done.stdout[:200])


def test_completion_of_an_unknown_shell_is_exit_2():
    done = run_cli("--show-completion", "tcsh")
    assert done.returncode == 2 and "bash, zsh, fish" in done.stderr


def test_images_list_piped_keeps_every_alias_whole():
    done = run_cli("images", "list", env={"COLUMNS": "80"})
    assert done.returncode == 0
    assert "cpu_debian12_py3.11_pytorch_1.13_broken_torchvision" in done.stdout.split()
    assert "…" not in "".join(
        line.split("│")[1] for line in done.stdout.splitlines() if line.count("│") > 2
    )


def test_pull_of_local_images_says_they_are_not_pulled(tmp_path):
    done = run_cli("images", "pull", "family:local-test", db=tmp_path / "v.sqlite")
    assert done.returncode == 0, done.stderr
    assert "not pulled: cpu_debian12_py3.11: built locally" in done.stderr
    assert "┏" not in done.stdout  # no empty table
    never = run_cli("images", "pull", "family:local-test", "--pull", "never")
    assert never.returncode == 2 and "missing or always" in never.stderr


@pytest.mark.docker
def test_probe_image_hint_names_the_probe_image_option(tmp_path):
    done = run_cli(
        "hosts", "probe", "--probe-image", "valorch/absent:none", db=tmp_path / "v.sqlite"
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "--probe-image" in done.stderr and "or pass --image" not in done.stderr


@pytest.mark.docker
def test_hosts_check_without_probe_image_measures_the_local_engine_here(tmp_path):
    done = run_cli(
        "hosts", "check", "--probe-image", "valorch/absent:none", db=tmp_path / "v.sqlite"
    )
    assert done.returncode == 0, done.stdout + done.stderr  # a local engine: statvfs here
    text = " ".join(done.stdout.split())
    assert "no probe image" in text and "or pass --image" not in text


@pytest.mark.parametrize(
    "reference,alias",
    [
        ("127.0.0.1:5177/hb/base:v1", "127.0.0.1_5177_hb_base_v1"),
        ("hb-candidate/pytorch:rc1", "hb-candidate_pytorch_rc1"),
        ("valorch/test:fake-rocm", "valorch_test_fake-rocm"),
        ("other/pytorch:rc1", "other_pytorch_rc1"),  # not the same alias as hb-candidate's
    ],
)
def test_uncatalogued_references_keep_registry_and_repository_in_their_alias(reference, alias):
    done = run_cli("images", "show", reference, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["alias"] == alias


@pytest.mark.docker
def test_hosts_check_level_1_without_gpus_says_what_it_skipped(tmp_path):
    done = run_cli(
        "hosts", "check", "--level", "1", db=tmp_path / "v.sqlite", env={"COLUMNS": "250"}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "GPU preflight" in done.stdout and "skipped: no GPU on this host" in done.stdout
    js = json.loads(
        run_cli("hosts", "check", "--level", "1", "--json", db=tmp_path / "v.sqlite").stdout
    )
    probes = [p for v in js["hosts"][0]["preflight"] for p in v["probes"]]
    assert [p["level"] for p in probes] == [0, 1]
