#!/usr/bin/env python3
"""The house style's numbers for a checkout: before/after figures for a review.

    python scripts/style-metrics.py [ROOT] [--json]

ROOT is a checkout (default: the one this script is in). It reads the Python files under
ROOT/orchestrator and ROOT/valorch_probe (the probe) and prints:

- `any_annotations`: uses of `Any` inside annotations (parameters, returns, annotated
  assignments, string annotations included) in orchestrator (the probe, valorch_probe, is its own package), found with `ast`;
- `any_bare`: annotations that are `Any` itself (`x: Any`, `-> Any`), the loosest ones;
- `any_names`: every `Any` name outside the probe (aliases and casts included);
- the longest function or method (file:name and its lines, decorators excluded);
- the share of lines over 100 characters;
- the number of `noqa` markers (comments only, found with `tokenize`).

Only the standard library is used, so it runs on any checkout with any Python 3.10+.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import sys
import tokenize
from pathlib import Path

LINE_LIMIT = 100


def _is_any(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "Any"
    return isinstance(node, ast.Attribute) and node.attr == "Any"


def _is_bare_any(annotation: ast.AST) -> bool:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.strip() in ("Any", "typing.Any")
    return _is_any(annotation)


def _count_any(annotation: ast.AST | None) -> int:
    """`Any` in an annotation, looking into string (forward-reference) annotations too."""
    if annotation is None:
        return 0
    count = 0
    for node in ast.walk(annotation):
        if _is_any(node):
            count += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                inner = ast.parse(node.value, mode="eval")
            except SyntaxError:
                continue
            count += _count_any(inner.body)
    return count


def _annotations(tree: ast.AST) -> list[ast.AST | None]:
    found: list[ast.AST | None] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            found.extend(p.annotation for p in params if p is not None)
            found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
    return found


def _noqa(text: str) -> int:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text.count("# noqa")
    return sum(1 for t in tokens if t.type == tokenize.COMMENT and "noqa" in t.string.lower())


def measure(root: Path) -> dict[str, object]:
    package = root / "orchestrator"
    if not package.is_dir():
        raise SystemExit(f"style-metrics: {package} is not a directory; pass a valorch checkout")
    any_annotations = any_bare = any_names = lines = long_lines = noqa = 0
    longest = ("", 0)
    per_file: dict[str, int] = {}
    probe = sorted((root / "valorch_probe").rglob("*.py"))
    for path in sorted(package.rglob("*.py")) + probe:
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        file_lines = text.splitlines()
        lines += len(file_lines)
        long_lines += sum(1 for line in file_lines if len(line) > LINE_LIMIT)
        noqa += _noqa(text)
        tree = ast.parse(text, filename=rel)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > longest[1]:
                    longest = (f"{rel}:{node.name}", length)
        if path in probe:  # the probe's typing generics are Python 3.8's: no Any figures
            continue
        annotations = _annotations(tree)
        in_annotations = sum(_count_any(a) for a in annotations)
        any_bare += sum(1 for a in annotations if a is not None and _is_bare_any(a))
        any_annotations += in_annotations
        any_names += sum(1 for node in ast.walk(tree) if _is_any(node))
        if in_annotations:
            per_file[rel] = in_annotations
    top = sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    return {
        "root": str(root),
        "any_annotations": any_annotations,
        "any_bare": any_bare,
        "any_names": any_names,
        "longest_function": longest[0],
        "longest_function_lines": longest[1],
        "lines": lines,
        "lines_over_100": long_lines,
        "share_over_100_pct": round(100.0 * long_lines / lines, 2) if lines else 0.0,
        "noqa_markers": noqa,
        "any_annotations_top_files": dict(top),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    figures = measure(Path(args.root).resolve())
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        print()
        return 0
    rows = [
        ("Any in annotations (outside the probe)", figures["any_annotations"]),
        ("bare Any annotations (x: Any, -> Any)", figures["any_bare"]),
        ("Any names (outside the probe)", figures["any_names"]),
        (
            "longest function",
            f"{figures['longest_function']} ({figures['longest_function_lines']} lines)",
        ),
        (
            f"lines over {LINE_LIMIT} characters",
            f"{figures['lines_over_100']} of {figures['lines']}"
            f" ({figures['share_over_100_pct']} %)",
        ),
        ("noqa markers", figures["noqa_markers"]),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"style metrics of {figures['root']}/orchestrator")
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
    top = figures["any_annotations_top_files"]
    assert isinstance(top, dict)
    if top:
        print("  files with the most Any in annotations:")
        for rel, count in top.items():
            print(f"    {count:>4}  {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
