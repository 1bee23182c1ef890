"""Read YAML specs and validate them, with errors that name file, line and key.

The parsed document keeps its node tree so that a pydantic error location
(``("suites", 1, "deadline")``) can be turned back into a line number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from .errors import SpecError

M = TypeVar("M", bound=BaseModel)


class Document:
    """A parsed YAML file: its data and where each key and item came from."""

    def __init__(self, path: Path, data: Any, node: yaml.Node | None) -> None:
        self.path = path
        self.data = data
        self.node = node

    def line(self, loc: tuple[Any, ...]) -> int:
        """1-based line of the deepest node along ``loc`` that exists."""
        node = self.node
        line = node.start_mark.line + 1 if node is not None else 1
        for key in loc:
            if isinstance(node, yaml.MappingNode):
                found = None
                for k, v in node.value:
                    if k.value == str(key):
                        found = (k, v)
                        break
                if found is None:
                    break
                line = found[0].start_mark.line + 1
                node = found[1]
            elif (
                isinstance(node, yaml.SequenceNode)
                and isinstance(key, int)
                and key < len(node.value)
            ):
                node = node.value[key]
                line = node.start_mark.line + 1
            else:
                break
        return line

    def sub(self, loc: tuple[Any, ...]) -> Document:
        """The document rooted at ``loc`` (for lists of models in one file)."""
        node = self.node
        data = self.data
        for key in loc:
            data = data[key]
            if isinstance(node, yaml.MappingNode):
                node = next((v for k, v in node.value if k.value == str(key)), None)
            elif isinstance(node, yaml.SequenceNode):
                node = node.value[key]
        return Document(self.path, data, node)


_BASE_LOADER = getattr(
    yaml, "CSafeLoader", yaml.SafeLoader
)  # libyaml when built with it: much faster than the pure-Python loader


class _Loader(_BASE_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader, with a timestamp constructor whose errors carry the line."""


def _timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    try:
        return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
    except ValueError as exc:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"'{node.value}' looks like a date but is not one ({exc}); quote it to keep it "
            "as text, or write a real date (YYYY-MM-DD)",
            node.start_mark,
        ) from None


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)


def decode(path: Path, raw: bytes) -> str:
    """UTF-8 text of ``raw``, or a SpecError naming the line and byte that are not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpecError(
            f"{path}:{line}:{column}: not UTF-8 text (byte 0x{raw[exc.start]:02x})",
            "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8), or check that it is the "
            "file you meant",
        ) from None


def read_text(path: Path, what: str = "file") -> str:
    """A user's text file, as UTF-8; a missing or unreadable file is a SpecError."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SpecError(f"{path}: no such file", f"check the path of the {what}") from None
    except IsADirectoryError:
        raise SpecError(f"{path}: is a directory, not a {what}", "pass the file itself") from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror}") from None
    return decode(path, raw)


def load(path: Path) -> Document:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SpecError(
            f"{path}: no such file", "check the path; job specs live in jobs/, images in images/"
        ) from None
    except IsADirectoryError:
        raise SpecError(
            f"{path}: is a directory, not a YAML file", "pass the file itself"
        ) from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror}") from None
    return parse(decode(path, raw), path)


def parse(text: str, path: Path) -> Document:
    """Parse YAML text once (node tree and data), refusing duplicate keys."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            check_duplicates(path, node)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = exc.problem or str(exc)
        hint = (
            "quote the value"
            if "not one" in problem
            else "fix the YAML syntax at that line (indentation, quoting, a missing colon)"
        )
        raise SpecError(f"{where}: invalid YAML: {problem}", hint) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        char = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise SpecError(
            f"{path}:{line}: invalid YAML: character 0x{char:02x} is not allowed in YAML text",
            "remove control characters (a binary file, or a NUL byte?)",
        ) from None
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}: invalid YAML: {exc}", "fix the YAML syntax") from None
    except RecursionError:
        raise SpecError(
            f"{path}: invalid YAML: nested too deeply", "flatten the document"
        ) from None
    finally:
        loader.dispose()
    return Document(path, data, node)


def check_duplicates(path: Path, root: yaml.Node) -> None:
    """A key given twice in one mapping is an error naming both lines (YAML would keep the last)."""
    stack = [root]
    seen_nodes: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:  # anchors and aliases share nodes
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], yaml.Node] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    ident = (key.tag, key.value)
                    if ident in first:
                        raise SpecError(
                            f"{path}:{key.start_mark.line + 1}: duplicate key '{key.value}' "
                            f"(first given at line {first[ident].start_mark.line + 1})",
                            "keep one of the two: YAML would silently use the last",
                        ) from None
                    first[ident] = key
                stack.append(key)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def validate(doc: Document, model: type[M], what: str) -> M:
    """Validate a document against a model or raise a SpecError naming file, line and key."""
    if not isinstance(doc.data, dict):
        raise SpecError(
            f"{doc.path}:{doc.line(())}: {what} must be a mapping of keys, "
            f"found {type(doc.data).__name__}"
        )
    try:
        return model.model_validate(doc.data)
    except ValidationError as exc:
        raise SpecError(format_errors(doc, exc, what)) from None


def format_errors(doc: Document, exc: ValidationError, what: str) -> str:
    lines = []
    errors = exc.errors()
    deeper = {tuple(e["loc"][:n]) for e in errors for n in range(len(e["loc"]))}
    for err in errors[:10]:
        loc = tuple(err["loc"])
        if err["type"] == "too_short" and loc in deeper:
            continue  # a consequence of an error inside the list, reported there
        key = ".".join(str(p) for p in loc) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key (remove it or check its spelling)"
        elif err["type"] == "missing":
            msg = "required key is missing"
        lines.append(f"{doc.path}:{doc.line(loc)}: {what}: key '{key}': {msg}")
    return "\n".join(lines)
