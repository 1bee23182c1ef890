"""``valorch run`` is a gate too: a run where nothing was tested (every check skipped,
unsupported or not applicable) says "nothing was tested", naming the counts and the reasons,
and exits 1, unless ``--allow-empty`` accepts it knowingly. A run with one exercised check
still passes (``make run``'s smoke job)."""

import json

import yaml
from root_helpers import run_cli


def test_nothing_tested_is_exit_1_unless_allowed(tmp_path):
    job = tmp_path / "empty.yaml"
    job.write_text(
        yaml.safe_dump(
            {
                "name": "empty",
                "images": ["host"],
                "suites": [
                    {
                        "name": "command",
                        "commands": [
                            {"id": "no-tool", "argv": ["valorch-no-such-tool-here"]},
                            {"id": "no-tool-either", "argv": ["valorch-nor-this-one"]},
                        ],
                    }
                ],
            }
        )
    )
    db = tmp_path / "v.sqlite"
    empty = run_cli("run", "--job", str(job), "--executor", "host", "--no-matrix", db=db)
    assert empty.returncode == 1, empty.stderr
    assert "nothing was tested: 2 checks: 2 unsupported" in empty.stderr
    assert "command.no-tool: unsupported:" in empty.stderr and "--allow-empty" in empty.stderr

    allowed = run_cli(
        "run", "--job", str(job), "--executor", "host", "--allow-empty", "--json", db=db
    )
    assert allowed.returncode == 0, allowed.stderr
    assert "nothing was tested" not in allowed.stderr
    assert json.loads(allowed.stdout)[0]["counts"] == {"unsupported": 2}

    job.write_text(job.read_text().replace("valorch-nor-this-one", "python3"))
    one = run_cli("run", "--job", str(job), "--executor", "host", "--no-matrix", db=db)
    assert one.returncode == 0, one.stderr  # one check exercised: a run that tested something
