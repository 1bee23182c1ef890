"""Importing this package registers every suite and check: the modules in
``registry.CHECK_MODULES``, in that order.

That order is the order checks register in, and so the order a suite runs its checks in
and the order ``docs/checks.md`` and ``valorch`` list them: the cheap facts first (smoke,
the harness self-test), then kernels, features, compile, profiler, the other frameworks,
job-declared checks and the multi-node suite (tests/unit/test_checks_doc_is_current.py
keeps the order). A run of one suite imports only its modules (``loader.load_suite``).
"""

import importlib

from ..registry import modules_to_import

for _name in modules_to_import():
    importlib.import_module("%s.%s" % (__name__, _name))
