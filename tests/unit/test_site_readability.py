"""Site readability helpers (pure): two-level column headers that never read the same,
plot ticks chosen for the range shown."""

from datetime import datetime

from orchestrator.ext.site.pages import column_groups, split_column
from orchestrator.ext.site.plots import log_ticks, nice_ticks, time_ticks


def test_columns_split_into_family_and_version():
    assert split_column("cpu_debian12_py3.11_pytorch_2.13") == (
        "cpu_debian12_py3.11_pytorch",
        "2.13",
    )
    assert split_column("rocm6.3_ubuntu24.04_py3.12_pytorch_release_2.4.0")[1] in (
        "2.4.0",
        "release_2.4.0",
    )
    assert split_column("host") == ("", "host")


def test_two_level_header_tells_every_column_apart():
    names = [
        "cpu_debian12_py3.11_pytorch_1.13",
        "cpu_debian12_py3.11_pytorch_2.13",
        "host",
        "test_fake-rocm",
    ]
    top, leaves = column_groups(names)
    assert top == [
        {"text": "cpu_debian12_py3.11_pytorch", "span": 2},
        {"text": "", "span": 1},
        {"text": "", "span": 1},
    ]
    assert [x["text"] for x in leaves] == ["1.13", "2.13", "host", "test_fake-rocm"]
    over = [t["text"] for t in top for _ in range(t["span"])]
    shown = [f"{f} {x['text']}".strip() for f, x in zip(over, leaves, strict=False)]
    assert len(set(shown)) == len(names)
    # a family of one: the whole name, nothing above it
    assert column_groups(["a_1.0", "b"]) == (
        [],
        [
            {"text": "a_1.0", "name": "a_1.0", "family": ""},
            {"text": "b", "name": "b", "family": ""},
        ],
    )
    # 'x_1' and 'x-1' would both read "x / 1": full names instead
    top, leaves = column_groups(["x_1", "x-1"])
    assert top == [] and [x["text"] for x in leaves] == ["x_1", "x-1"]
    assert column_groups(["cpu", "rocm"])[0] == []  # backends: one row


def test_time_ticks_are_round_and_labelled_apart():
    t0 = datetime(2026, 11, 25, 3, 57, 9).timestamp()
    for span in (40, 200, 3000, 90_000, 20 * 86400):
        ticks, fmt = time_ticks(t0, t0 + span)
        assert 2 <= len(ticks) <= 8, (span, ticks)
        labels = [datetime.fromtimestamp(t).strftime(fmt) for t in ticks]
        assert len(set(labels)) == len(labels), (span, labels)  # never the same minute repeated
        assert all(t0 <= t <= t0 + span for t in ticks)
    assert time_ticks(t0, t0 + 40)[1].endswith("%S")
    assert time_ticks(t0, t0 + 20 * 86400)[1] == "%Y-%m-%d"


def test_value_ticks_do_not_crowd():
    for lo, hi in ((0.81, 0.93), (8.1, 9.3), (0.0012, 0.0051), (3, 3), (0, 250)):
        ticks = nice_ticks(lo, hi)
        assert 2 <= len(ticks) <= 8 and ticks == sorted(set(ticks)), (lo, hi, ticks)
        assert ticks[0] <= lo and ticks[-1] >= hi, (lo, hi, ticks)  # no point above the top label
    assert log_ticks(0.3, 400) == [1, 10, 100]
    assert log_ticks(0.9, 6) == [1, 2, 5]
