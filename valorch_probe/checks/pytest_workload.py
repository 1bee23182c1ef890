"""Pytest workloads (suite ``pytest``): an upstream test file or directory run
inside the image, its JUnit XML ingested test by test.

The check ``pytest.run`` runs ``python3 -m pytest PATH --junitxml=FILE -q
-p no:cacheprovider ARGS`` (an argv list, the probe's own interpreter) and
passes when pytest ran its tests (exit 0 or 1). Each test case then becomes
one more result ``pytest.<classname>.<name>`` (sanitised to the id alphabet):

- passed → ``pass``; failed → ``fail``; skipped → ``skip``; pytest xfail → ``xfail``
- an error in a test's setup or teardown → ``fail`` (a fixture that breaks in
  this image is the image's failure), said so in the message
- a collection error (the module cannot even be imported) → ``error`` for
  ``pytest.<module>.collection``, and ``pytest.run`` fails (pytest exit 2).

``pytest.run`` itself is ``unsupported`` when pytest is not installed in the
image, ``timeout`` past its timeout, ``crash`` when pytest died by a signal,
and ``error`` for harness problems (the path is not there, usage errors, no
tests collected, no JUnit file).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import sys
from typing import Any, Callable, Dict, List, Tuple

from ..context import Fail, Outcome, Report, Unsupported
from ..registry import Check, declared_fields, suite
from ..sandbox import private_dir, run_workload
from ._workload import HarnessError, TimedOut

suite(
    "pytest",
    None,
    "A pytest workload declared in a job spec: suites: [{name: pytest, pytest: {path: tests/x.py "
    "(relative to the job file: shipped into the container; or absolute with in_image: true), "
    "args: [-k, 'not slow'], timeout: 600}}]. pytest.run runs it; each upstream test becomes "
    "pytest.<classname>.<name> from the JUnit XML.",
)

MAX_XML = 64 << 20  # bytes of JUnit XML parsed
_BAD = re.compile(r"[^A-Za-z0-9_.:\-\[\]/]+")
MAX_ID = 200


class Crashed(Outcome):
    status = "crash"


def test_id(classname: str, name: str) -> str:
    parts = [p for p in (_BAD.sub("_", classname).strip("."), _BAD.sub("_", name)) if p]
    cid = "pytest." + ".".join(parts or ["unnamed"])
    if len(cid) > MAX_ID:
        digest = hashlib.sha1(cid.encode("utf-8")).hexdigest()[:10]
        cid = cid[: MAX_ID - 11] + ":" + digest
    return cid


def _text(el: Any, limit: int = 4000) -> str:
    return ((el.text or "") if el is not None else "")[-limit:]


def case_result(tc: Any, feature: str) -> Tuple[str, Dict[str, Any]]:
    """(status, result dict without the id) of one <testcase>."""
    failure, error = tc.find("failure"), tc.find("error")
    skipped = tc.find("skipped")
    msg, log = "", ""
    if failure is not None:
        status, msg, log = "fail", failure.get("message") or "failed", _text(failure)
    elif error is not None:
        text = error.get("message") or "error"
        if "collection failure" in text or not tc.get("classname"):
            status, msg = "error", "collection error: " + text
        else:
            status, msg = "fail", "error outside the test body (setup/teardown): " + text
        log = _text(error)
    elif skipped is not None:
        xfail = (skipped.get("type") or "") == "pytest.xfail"
        status = "xfail" if xfail else "skip"
        msg = ("pytest xfail: " if xfail else "skipped: ") + (skipped.get("message") or "")
    else:
        status = "pass"
    try:
        duration = max(0.0, float(tc.get("time") or 0.0))
    except ValueError:
        duration = 0.0
    return status, {
        "status": status,
        "feature": feature,
        "kind": "pytest",
        "message": msg[:2000],
        "log": log,
        "duration_s": duration,
        "metrics": {},
    }


def parse_junit(
    path: str, feature: str, max_tests: int, strip: str = ""
) -> Tuple[List[Dict[str, Any]], Dict[str, int]]:
    """Per-test results (at most max_tests) and counts by status (of all tests);
    ``strip`` is a classname prefix left out of the ids (``workloads.`` when shipped)."""
    import xml.etree.ElementTree as ET

    size = os.path.getsize(path)
    if size > MAX_XML:
        raise HarnessError("JUnit XML is %d bytes (more than %d): not parsed" % (size, MAX_XML))
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise HarnessError("JUnit XML written by pytest does not parse: %s" % exc) from exc
    results = []  # type: List[Dict[str, Any]]
    counts = {}  # type: Dict[str, int]
    seen = {}  # type: Dict[str, int]
    for tc in root.iter("testcase"):
        classname, name = tc.get("classname") or "", tc.get("name") or ""
        if strip and classname.startswith(strip):
            classname = classname[len(strip) :]
        # a collection error names the module
        elif strip and not classname and name.startswith(strip):
            name = name[len(strip) :]
        status, res = case_result(tc, feature)
        counts[status] = counts.get(status, 0) + 1
        cid = (
            test_id(classname, name)
            if status != "error" or classname
            else test_id(name, "collection")
        )
        seen[cid] = seen.get(cid, 0) + 1
        if seen[cid] > 1:  # the same test twice (e.g. a failure and a teardown error)
            cid = "%s:%d" % (cid, seen[cid])
        if len(results) < max_tests:
            res["check"] = cid
            results.append(res)
    return results, counts


def _summary(counts: Dict[str, int]) -> str:
    return ", ".join("%d %s" % (n, k) for k, n in sorted(counts.items())) or "no tests"


def pytest_fn(spec: Dict[str, Any]) -> Callable[[Any], Report]:
    path = str(spec["path"])
    args = [str(a) for a in spec.get("args") or ()]
    timeout = float(spec.get("timeout", 600.0))
    feature = spec.get("feature") or "pytest %s" % path
    max_tests = int(spec.get("max_tests", 5000))
    shipped = not path.startswith("/")

    def fn(ctx: Any) -> Report:
        _ready(path, shipped)
        # pytest runs as the workload user: it writes the XML here
        tmp = private_dir("valorch-pytest-")
        try:
            xml = os.path.join(tmp, "junit.xml")
            argv = [
                sys.executable,
                "-m",
                "pytest",
                path,
                "--junitxml=" + xml,
                "-q",
                "-p",
                "no:cacheprovider",
                *args,
            ]
            run = run_workload(argv, timeout)  # an untrusted workload (sandbox)
            tail = (run["stdout"]["tail"] + "\n" + run["stderr"]["tail"]).strip()
            log = "$ %s\n%s" % (" ".join(argv), tail)
            rc = run["returncode"]
            metrics = {"exit_code": rc, "user": run["user"]}  # type: Dict[str, Any]
            if run["timed_out"]:
                raise TimedOut(
                    "pytest %s passed its timeout of %gs and was killed" % (path, timeout),
                    metrics,
                    log=log,
                )
            if rc is not None and rc < 0:
                raise Crashed(
                    "pytest died by signal %d while running %s\n%s" % (-rc, path, tail[-1500:]),
                    metrics,
                    log=log,
                )
            return _verdict(path, xml, rc, (feature, max_tests, shipped), metrics, log, tail)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    return fn


def _ready(path: str, shipped: bool) -> None:
    """The workload is there and pytest is installed, or the outcome that says which not."""
    if not os.path.exists(path):
        if shipped:
            raise HarnessError(
                "the workload %s was not shipped into this container (cwd %s); the docker "
                "and host executors ship paths relative to the job file, others need "
                "in_image: true" % (path, os.getcwd())
            )
        raise Fail("%s does not exist in this image" % path)
    if importlib.util.find_spec("pytest") is None:
        raise Unsupported(
            "pytest is not installed in this image (%s -m pytest: No module named pytest); "
            "install pytest in the image, or declare command checks instead" % sys.executable
        )


def _verdict(
    path: str,
    xml: str,
    rc: Any,
    declared: Tuple[str, int, bool],
    metrics: Dict[str, Any],
    log: str,
    tail: str,
) -> Report:
    """pytest's exit code and JUnit file read into the run's report (or its outcome)."""
    feature, max_tests, shipped = declared
    extra, counts = [], {}  # type: Tuple[List[Dict[str, Any]], Dict[str, int]]
    if os.path.islink(xml) or (os.path.exists(xml) and not os.path.isfile(xml)):
        raise HarnessError(
            "pytest left %s as something other than a plain file: not read" % xml,
            metrics,
            log=log,
        )
    if os.path.exists(xml):
        extra, counts = parse_junit(xml, feature, max_tests, "workloads." if shipped else "")
    metrics.update({"tests": sum(counts.values()), **{"n_" + k: v for k, v in counts.items()}})
    more = "" if len(extra) >= sum(counts.values()) else "; only the first %d reported" % len(extra)
    if rc == 2:
        raise Fail(
            "pytest was interrupted (exit 2: collection errors?): %s%s\n%s"
            % (_summary(counts), more, tail[-1500:]),
            metrics,
            log=log,
            extra=extra,
        )
    if rc not in (0, 1):
        why = {
            3: "internal error",
            4: "usage error (check args)",
            5: "no tests collected",
        }.get(rc, "")
        raise HarnessError(
            "pytest exited with code %s (%s) for %s\n%s" % (rc, why, path, tail[-1500:]),
            metrics,
            log=log,
            extra=extra,
        )
    if not os.path.exists(xml):
        raise HarnessError("pytest exited %s but wrote no JUnit XML" % rc, metrics, log=log)
    return Report(
        "pytest %s: %s (exit %s)%s" % (path, _summary(counts), rc, more),
        metrics,
        log=log,
        extra=extra,
    )


def pytest_check(spec: Dict[str, Any]) -> Check:
    if not spec.get("path"):
        raise ValueError("declared pytest workload has no path")
    return Check(fn=pytest_fn(spec), suite="pytest", **declared_fields("pytest", spec))
