"""The command line every generator of a checked-in file shares: write the file, or with
--check exit 1 when the file on disk differs from what would be written (the tests that
keep a generated file current run the generator with --check)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def write_or_check(
    argv: list[str] | None, doc: str, default_out: Path, render: Callable[[], str]
) -> int:
    """The exit code; the file is written (and said) unless --check was given."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--out", default=str(default_out))
    p.add_argument("--check", action="store_true", help="fail if the file is out of date")
    args = p.parse_args(argv)
    text = render()
    out = Path(args.out)
    if args.check:
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            script = Path(sys.argv[0]).name
            sys.stderr.write("%s is out of date: run scripts/%s\n" % (out, script))
            return 1
        return 0
    out.write_text(text, encoding="utf-8")
    print("wrote %s" % out)
    return 0
