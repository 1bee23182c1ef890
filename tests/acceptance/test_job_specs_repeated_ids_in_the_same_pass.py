"""Two command checks of one suite with the same id are named in the same pass as the
suite's other mistakes (here a misspelt key), by `valorch jobs validate` and by `run --job`:
the model checks ids only once every field is valid, which left them to a second edit."""

from __future__ import annotations

from conftest import run_cli

SPEC = """\
name: twice
images: [host]
suites:
  - name: command
    commands:
      - id: same
        argv: [python3, --version]
        stdot: ['^Python']
      - id: same
        argv: [python3, --version]
"""


def test_repeated_ids_and_another_mistake_in_one_pass(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text(SPEC)
    for args in (("jobs", "validate", str(path)), ("run", "--job", str(path))):
        proc = run_cli(*args, db=tmp_path / "v.sqlite")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert (
            f"{path}:4: job spec: key 'suites.0': command ids must be unique; repeated: same"
            in (proc.stderr)
        ), proc.stderr
        assert "key 'suites.0.commands.0.stdot': unknown key; did you mean 'stdout'?" in (
            proc.stderr
        ), proc.stderr


def test_repeated_ids_alone_are_named_once(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text(SPEC.replace("stdot", "stdout"))
    proc = run_cli("jobs", "validate", str(path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("command ids must be unique") == 1, proc.stderr
