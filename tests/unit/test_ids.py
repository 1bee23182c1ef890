"""Run and batch ids: time-ordered version-7 UUIDs (store/ids.py)."""

import uuid

from orchestrator.store.ids import new_id


def test_version_7_uuids_ordered_by_time_and_reproducible():
    made = [new_id(ms=1_700_000_000_000 + i) for i in range(200)]
    assert made == sorted(made) and len(set(made)) == 200
    u = uuid.UUID(made[0])
    assert u.version == 7 and u.variant == uuid.RFC_4122 and len(made[0]) == 36
    assert int(made[0][:8] + made[0][9:13], 16) == 1_700_000_000_000  # the first 48 bits are the milliseconds
    assert new_id(ms=5, rand=123) == new_id(ms=5, rand=123) != new_id(ms=5, rand=124)
    same_ms = {new_id(ms=7) for _ in range(1000)}
    assert len(same_ms) == 1000  # 74 random bits within one millisecond


def test_new_runs_get_time_ordered_ids(tmp_path):
    from orchestrator.spec import HostSpec, ImageSpec
    from orchestrator.store.db import open_engine, session_factory
    from orchestrator.store.queries import start_run

    factory = session_factory(open_engine(f"sqlite:///{tmp_path / 'v.sqlite'}"))
    with factory() as s:
        run = start_run(s, batch=new_id(), job="j", image=ImageSpec(alias="host", reference="host", backend="cpu",
                                                                    executor="host"),
                        digest=None, host=HostSpec(name="vm"), executor="host", spec_hash="0" * 16, cpu_only=False,
                        suites=[])
        assert uuid.UUID(run.id).version == 7
