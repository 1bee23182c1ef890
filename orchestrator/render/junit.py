"""JUnit XML: one testsuite per run and suite, one testcase per check (last attempt)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

from .. import encode
from ..spec import FAILING, NOT_EXERCISED, tampered

if TYPE_CHECKING:
    from ..store.models import Result, Run

#: (run, check id, status) → the reason of the waiver that excuses it, or None
Excuse = Callable[["Run", str, str], "str | None"]


def class_part(text: str) -> str:
    """``text`` (an image alias, a diff's environment) as one part of a JUnit classname:
    Jenkins splits a classname at every dot into packages and a class, so the dots of
    "py3.11" or "1.13" become "_" and only the separators valorch puts in remain."""
    return text.replace(".", "_")


def results_junit(
    runs: Sequence[Run],
    results: dict[str, Sequence[Result]],
    infra_errors: dict[str, Sequence[str]] | None = None,
    excuse: Excuse | None = None,
) -> str:
    """``infra_errors``: run id → the infrastructure errors of its tasks, each an ``error``
    testcase (such a task stored no result, and CI must still see it). Every failing check is a
    ``failure`` unless ``excuse`` (a known issue) names why it is expected: then it is ``skipped``
    with that reason. A ``partial`` check passes, its message in ``system-out``."""
    root = ET.Element("testsuites", name="valorch")
    for run in runs:
        last: dict[str, Result] = {}
        for res in results[run.id]:
            key = res.check.check_id
            if key not in last or res.attempt >= last[key].attempt:
                last[key] = res
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"{run.image.alias}",
            hostname=run.host.name,
            timestamp=run.started.isoformat(),
            id=run.id,
        )
        for key, res in last.items():
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"{class_part(run.image.alias)}.{key.rsplit('.', 1)[0]}",
                name=key,
                time=f"{res.duration_s:.3f}",
            )
            why = (
                excuse(run, key, res.status)
                if excuse is not None and res.status in (*FAILING, "error")
                else None
            )
            if why is not None:
                ET.SubElement(case, "skipped", message=why[:500])
            elif res.status in FAILING or (res.status == "error" and tampered(res.metrics)):
                # a forged or flooded result fails, never "errors"
                node = ET.SubElement(
                    case,
                    "failure",
                    type=res.status if res.status in FAILING else "tampered",
                    message=res.message[:500],
                )
                node.text = res.log[-4000:]
            elif res.status == "error":
                node = ET.SubElement(case, "error", type="error", message=res.message[:500])
                node.text = res.log[-4000:]
            elif res.status in (*NOT_EXERCISED, "xfail"):  # not a failure: says why
                ET.SubElement(case, "skipped", message=f"{res.status}: {res.message[:480]}")
            elif res.status == "partial":  # passes, and says what is missing
                ET.SubElement(case, "system-out").text = f"partial: {res.message}"[:4000]
        for i, why in enumerate((infra_errors or {}).get(run.id, ()), 1):
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"{class_part(run.image.alias)}.infrastructure",
                name=f"infrastructure.{i}",
                time="0.000",
            )
            node = ET.SubElement(case, "error", type="infrastructure", message=why[:500])
            node.text = why[-4000:]
        counted(suite)
    return written(root)


def error_junit(message: str, hint: str | None = None) -> str:
    """A run that could not run or be stored (exit 3): one ``error`` testcase saying why,
    so that a CI job that uploads the file never finds it missing or green."""
    root = ET.Element("testsuites", name="valorch", tests="1", errors="1")
    suite = ET.SubElement(
        root, "testsuite", name="valorch", tests="1", failures="0", errors="1", skipped="0"
    )
    case = ET.SubElement(suite, "testcase", classname="valorch", name="run", time="0.000")
    ET.SubElement(case, "error", type="infrastructure", message=message[:500]).text = (
        message + (f"\nhint: {hint}" if hint else "")
    )[-4000:]
    return written(root)


def counted(suite: ET.Element) -> None:
    """Set a testsuite's tests, failures, errors and skipped from its testcases' outcomes."""
    outcomes = [child.tag for case in suite for child in case]
    suite.set("tests", str(len(suite)))
    for attr, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        suite.set(attr, str(outcomes.count(tag)))


def written(root: ET.Element) -> str:
    """The document as the file holds it: indented, with its declaration, XML-safe text."""
    ET.indent(root)
    return encode.xml(ET.tostring(root, encoding="unicode", xml_declaration=True)) + "\n"
