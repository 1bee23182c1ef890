"""``hosts check --job`` answers with the placement ``valorch run`` uses: a job whose label no
host has (``labels: [gfx942]`` on a machine without that label or an AMD GPU) is refused by
the preflight with the run's own words and the run's exit code (3), in the table and in
``--json``, where before the preflight said ok and only the run said no."""

import json

from root_helpers import run_cli

JOB = "name: gpujob\nimages: [valorch/test:fake-rocm]\nlabels: [gfx942]\nsuites: [smoke]\n"


def test_the_preflight_refuses_what_the_run_refuses_in_its_words(tmp_path):
    job = tmp_path / "gpujob.yaml"
    job.write_text(JOB)
    db = tmp_path / "v.sqlite"
    ran = run_cli("run", "--job", str(job), "--no-matrix", db=db)
    assert ran.returncode == 3, ran.stderr
    said = ran.stderr[ran.stderr.index("no host can run image") :].split("\n  hint:")[0].strip()
    assert "lacks label 'gfx942'" in said

    checked = run_cli("hosts", "check", "--job", str(job), "--json", db=db)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    found = json.loads(checked.stdout)
    (refused,) = found["placement"]
    assert refused["image"] == "valorch_test_fake-rocm" and not refused["ok"]
    assert refused["reason"].strip() == said  # the same words, from the same function
    assert (
        found["verdict"]["exit_code"] == 3
        and "valorch_test_fake-rocm" in found["verdict"]["reason"]
    )
    assert "error: no host can run image valorch_test_fake-rocm" in checked.stderr

    table = run_cli("hosts", "check", "--job", str(job), db=db)
    assert table.returncode == 3
    assert "placement" in table.stdout and "lacks label 'gfx942'" in table.stdout

    # without the label, --cpu-only places the ROCm image on CPU slots, as run --cpu-only does
    job.write_text(JOB.replace("labels: [gfx942]\n", ""))
    cpu = json.loads(
        run_cli("hosts", "check", "--job", str(job), "--cpu-only", "--json", db=db).stdout
    )
    assert cpu["placement"] == []
