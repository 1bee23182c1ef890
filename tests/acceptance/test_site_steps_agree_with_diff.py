"""The site's "recent changes", check pages and trend markers list a timing step only where
`valorch diff` on the same two stored runs calls it slower (or faster): a real step is listed,
a +1059 % jump measured on a busy host (which diff calls noise) is not. The timings are stored
with the store's API (the rows diff and the site both read)."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta

from orchestrator.regression import changepoints
from orchestrator.spec import CheckResult, ImageSpec
from orchestrator.store.db import open_engine, session_factory
from tests.store_helpers import stored_run

T0 = datetime(2026, 3, 1)
QUIET = {"cpu_pressure": 0.01, "host_load_before": 0.2, "host_cpus": 2}
BUSY = {"cpu_pressure": 0.9, "host_load_before": 3.5, "host_cpus": 2}


def _run(factory, image, i, check, level, metrics, rng):
    samples = tuple(level * (1 + rng.gauss(0, 0.01)) for _ in range(12))
    with factory() as s:
        run = stored_run(
            s,
            image,
            [
                CheckResult(
                    check=check,
                    status="pass",
                    kind="kernel",
                    samples=samples,
                    unit="s",
                    feature=check,
                    metrics=metrics,
                )
            ],
            batch=f"b{check}{i:03d}",
        )
        run.started, run.ended, run.state = (
            T0 + timedelta(hours=i),
            T0 + timedelta(hours=i, minutes=5),
            "done",
        )
        s.commit()
        return run.id


def test_site_lists_a_step_only_where_diff_calls_it_a_regression(cli, tmp_path):
    factory = session_factory(open_engine(str(cli.db)))
    rng = random.Random(7)
    a = ImageSpec(alias="img_a", reference="acme/img:a", backend="cpu")
    b = ImageSpec(alias="img_b", reference="acme/img:b", backend="cpu")
    # a real step: +30 % from the eighth run on, every timing on a quiet host
    real = [
        _run(factory, a, i, "kernels.matmul.fp32", 1e-3 if i < 7 else 1.3e-3, QUIET, rng)
        for i in range(12)
    ]
    # a jump of +1059.5 % on a busy host, after two quiet runs (too few quiet runs to drop the busy ones)
    busy = [
        _run(
            factory,
            b,
            20 + i,
            "kernels.conv.fp32",
            1e-3 if i < 2 else 11.595e-3,
            QUIET if i < 2 else BUSY,
            rng,
        )
        for i in range(4)
    ]
    # the history alone (medians, as the site's trend reads them) has a step in both
    assert changepoints.analyse([1e-3, 1e-3, 11.595e-3, 11.595e-3], 0.05).shifts

    def kind(base, head, check):
        proc = cli("diff", base, head, "--format", "json")
        return {c["check"]: c for c in json.loads(proc.stdout)["changes"]}[check][
            "kind"
        ], proc.returncode

    assert kind(real[6], real[7], "kernels.matmul.fp32") == ("slower", 1)
    assert kind(busy[1], busy[2], "kernels.conv.fp32") == (
        "noise",
        0,
    )  # "noisy host": shown, not counted

    out = tmp_path / "site"
    proc = cli("site", "build", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    changes = (out / "changes.html").read_text()
    assert "kernels.matmul.fp32" in changes and "(step)" in changes
    assert "kernels.conv.fp32" not in changes and "1059" not in changes
    assert "1059" not in (out / "index.html").read_text()
    conv = (out / "checks" / "kernels.conv.fp32.html").read_text()
    assert "(step)" not in conv and "1059" not in conv
    matmul = (out / "checks" / "kernels.matmul.fp32.html").read_text()
    assert "slower +" in matmul and f'href="../runs/{real[7]}.html"' in matmul
