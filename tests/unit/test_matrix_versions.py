import json

from orchestrator.spec import CheckResult, HostSpec, ImageSpec, SuiteRef
from orchestrator.store import queries
from orchestrator.store.db import open_engine, session_factory


def add_run(db, alias, pytorch, statuses):
    image = ImageSpec(
        alias=alias,
        reference=f"valorch/test:{alias}",
        backend="cpu",
        components={"pytorch": pytorch},
    )
    with session_factory(open_engine(str(db)))() as s:
        run = queries.start_run(
            s,
            batch="b",
            job="j",
            image=image,
            digest=None,
            host=HostSpec(name="h"),
            executor="docker",
            spec_hash="x",
            cpu_only=False,
            suites=[SuiteRef(name="features")],
        )
        queries.add_results(
            s,
            run.id,
            None,
            [CheckResult(check=c, feature=f"feature {c}", status=st) for c, st in statuses.items()],
        )
        run.state, run.ended = "done", queries.now()
        s.commit()
        return run.id


def test_publish_renders_again_byte_for_byte(cli):
    r113 = add_run(cli.db, "torch113", "1.13", {"f.float8": "unsupported", "f.add": "pass"})
    r213 = add_run(cli.db, "torch213", "2.13.0", {"f.float8": "pass", "f.add": "pass"})
    since = cli("matrix", "render", "--layout", "since", "--rows", "checks", "--format", "json")
    assert since.returncode == 0, since.stderr
    rows = {r["key"]: r["cells"] for r in json.loads(since.stdout)["rows"]}
    assert rows["f.float8"]["Since PyTorch"]["text"] == "2.13.0"
    assert sorted(rows["f.float8"]["Since PyTorch"]["runs"]) == sorted([r113, r213])
    assert rows["f.add"]["Since PyTorch"]["text"] == "≤ 1.13"  # nothing older was measured

    pub = cli("matrix", "publish", "--version", "v0.3", "--layout", "since", "--rows", "checks")
    assert pub.returncode == 0, pub.stderr
    first = cli("matrix", "render", "--version", "v0.3", "--format", "rst").stdout
    assert (
        ":Matrix version: ``v0.3``" in first
        and "    * - ``f.float8``\n      - feature f.float8\n      -\n      - 2.13.0" in first
    )

    add_run(
        cli.db, "torch213", "2.13.0", {"f.float8": "fail", "f.add": "pass"}
    )  # a newer run changes the live matrix
    live = cli(
        "matrix", "render", "--layout", "since", "--rows", "checks", "--format", "rst"
    ).stdout
    assert "      - 2.13.0" not in live and "unpublished" in live
    again = cli("matrix", "render", "--version", "v0.3", "--format", "rst").stdout
    assert again == first

    dup = cli("matrix", "publish", "--version", "v0.3")
    assert dup.returncode == 2 and "already published" in dup.stderr
    listed = json.loads(cli("matrix", "versions", "--json").stdout)
    assert [(v["version"], v["layout"], v["cells"]) for v in listed] == [("v0.3", "since", 4)]
    missing = cli("matrix", "render", "--version", "v9")
    assert missing.returncode == 2 and "no published matrix version 'v9'" in missing.stderr


def test_render_filters_and_bad_flags(cli):
    add_run(cli.db, "torch113", "1.13", {"f.add": "pass"})
    add_run(cli.db, "other", "2.0", {"f.add": "fail"})
    md = cli("matrix", "render", "--image", "torch*", "--layout", "features").stdout
    assert "| Feature | torch113 |" in md and "| other" not in md
    assert cli("matrix", "render", "--since", "2999-01-01").returncode == 2
    bad = cli("matrix", "render", "--layout", "nope")
    assert bad.returncode == 2 and "unknown --layout 'nope'" in bad.stderr
