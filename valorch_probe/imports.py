"""Does each framework package the inventory lists import?

A distribution's metadata says it is installed; only ``import`` says it works (a
torchvision whose native library has an undefined symbol is installed and broken).
Each import runs in a fresh interpreter of its own (a crash or hang in one cannot hide
the others; the packages a module imports come with it, as in use), and the outcome is
written into the headline component: ``extra.imports`` ``yes``, or
``extra.import_error`` with the last line of the error.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Dict, Iterable, List

IMPORT_TIMEOUT = 180.0
MAX_ERROR = 400


def _last_lines(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "")[-MAX_ERROR:]


def try_import(module: str, timeout: float = IMPORT_TIMEOUT) -> str:
    """ "" when ``import module`` succeeds in a fresh interpreter, else what went wrong."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import " + module],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return "import %s: no answer within %ds" % (module, timeout)
    except OSError as exc:
        return "import %s: %s" % (module, exc)
    if done.returncode == 0:
        return ""
    error = _last_lines(done.stderr.decode("utf-8", "replace"))
    if done.returncode < 0:
        return "import %s: killed by signal %d%s" % (
            module,
            -done.returncode,
            ": " + error if error else "",
        )
    return error or "import %s: exit %d" % (module, done.returncode)


def check_imports(
    components: Dict[str, Dict[str, Any]], errors: List[str], names: Iterable[str]
) -> None:
    """Import each framework package of ``names`` (headline components, each the module its
    users import but ``pytorch``) installed by pip (``source`` pip) and record the outcome in
    its component's ``extra``."""
    for name in sorted(names):
        module = "torch" if name == "pytorch" else name
        comp = components.get(name)
        if comp is None or comp.get("source") != "pip":
            continue
        try:
            error = try_import(module)
        except Exception as exc:
            errors.append("import %s: %s: %s" % (module, type(exc).__name__, exc))
            continue
        extra = dict(comp.get("extra") or {})
        if error:
            extra["import_error"] = error
        else:
            extra["imports"] = "yes"
        comp["extra"] = extra
