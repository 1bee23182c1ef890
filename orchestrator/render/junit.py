"""JUnit XML: one testsuite per run and suite, one testcase per check (last attempt)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence
from xml.etree import ElementTree as ET

from ..spec import FAILING


def results_junit(runs: Sequence[Any], results: dict[str, Sequence[Any]]) -> str:
    root = ET.Element("testsuites", name="valorch")
    for run in runs:
        last: dict[str, Any] = {}
        for res in results[run.id]:
            key = res.check.check_id
            if key not in last or res.attempt >= last[key].attempt:
                last[key] = res
        counts: dict[str, int] = defaultdict(int)
        suite = ET.SubElement(root, "testsuite", name=f"{run.image.alias}", hostname=run.host.name,
                              timestamp=run.started.isoformat(), id=run.id)
        for key, res in last.items():
            case = ET.SubElement(suite, "testcase", classname=f"{run.image.alias}.{key.rsplit('.', 1)[0]}",
                                 name=key, time=f"{res.duration_s:.3f}")
            counts["tests"] += 1
            if res.status in FAILING:
                counts["failures"] += 1
                node = ET.SubElement(case, "failure", type=res.status, message=res.message[:500])
                node.text = res.log[-4000:]
            elif res.status == "error":
                counts["errors"] += 1
                ET.SubElement(case, "error", type="error", message=res.message[:500]).text = res.log[-4000:]
            elif res.status in ("skip", "unsupported", "xfail"):
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=f"{res.status}: {res.message[:480]}")
        for k in ("tests", "failures", "errors", "skipped"):
            suite.set(k, str(counts[k]))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
