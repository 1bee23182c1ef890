"""A distribution installed beside valorch that declares a pydantic plugin (entry point
group ``pydantic``) is not imported into valorch's process and never sees what valorch
validates, unless the user asks for plugins with pydantic's own switch,
``PYDANTIC_DISABLE_PLUGINS`` (docs/architecture.md, "No third-party code by entry point")."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

SPY = textwrap.dedent("""
    import os

    with open(os.environ["SPY_MARKER"], "a") as f:
        f.write("imported\\n")


    class _Spy:
        def new_schema_validator(self, schema, schema_type, *rest):
            with open(os.environ["SPY_MARKER"], "a") as f:
                f.write(getattr(schema_type, "__name__", str(schema_type)) + "\\n")
            return None, None, None


    plugin = _Spy()
""")


@pytest.fixture()
def spy(tmp_path, monkeypatch) -> tuple[dict[str, str], Path]:
    """An installed distribution with a pydantic plugin that notes its import and every
    model it is shown, in a file; the switch unset unless a test sets it."""
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    site = tmp_path / "site"
    dist = site / "valorch_spy_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: valorch-spy-plugin\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text("[pydantic]\nspy = valorch_spy_plugin:plugin\n")
    (site / "valorch_spy_plugin.py").write_text(SPY)
    marker = tmp_path / "spy.log"
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "SPY_MARKER": str(marker)}, marker


@pytest.mark.parametrize("argv", [("images", "list"), ("jobs", "show", "jobs/smoke.yaml")])
def test_an_installed_pydantic_plugin_is_not_loaded(cli, spy, argv):
    env, marker = spy
    proc = cli(*argv, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists(), marker.read_text()


def test_a_host_run_never_shows_its_results_to_a_plugin(cli, spy, tmp_path):
    env, marker = spy
    proc = cli(
        "run",
        "--image",
        "host",
        "--check",
        "env.version.python",
        "--no-matrix",
        "--db",
        str(tmp_path / "r.sqlite"),
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists(), marker.read_text()


@pytest.mark.parametrize("switch", ["", "other"])
def test_the_users_switch_is_kept(cli, spy, switch):
    """An empty value loads every plugin, a list of other names loads this one: the same
    command then shows the plugin valorch's catalog models (which proves the spy is found).
    ``jobs show`` validates the catalog on every call (``images list`` may answer from its
    cache of a validated catalog, importing no pydantic at all)."""
    env, marker = spy
    argv = ("jobs", "show", "jobs/smoke.yaml")
    proc = cli(*argv, env={**env, "PYDANTIC_DISABLE_PLUGINS": switch})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = marker.read_text().split()
    assert seen[0] == "imported" and "ImageSpec" in seen


def test_naming_the_plugin_leaves_it_out(cli, spy):
    env, marker = spy
    proc = cli(
        "jobs", "show", "jobs/smoke.yaml", env={**env, "PYDANTIC_DISABLE_PLUGINS": "other,spy"}
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists() or "ImageSpec" not in marker.read_text().split()
