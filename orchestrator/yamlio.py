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
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
                node = node.value[key]
                line = node.start_mark.line + 1
            else:
                break
        return line

    def sub(self, loc: tuple[Any, ...]) -> "Document":
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


def load(path: Path) -> Document:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"{path}: no such file", "check the path; job specs live in jobs/, images in images/") from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise SpecError(f"{where}: invalid YAML: {exc.problem or exc}",
                        "fix the YAML syntax at that line (indentation, quoting, a missing colon)") from None
    return Document(path, data, node)


def validate(doc: Document, model: type[M], what: str) -> M:
    """Validate a document against a model or raise a SpecError naming file, line and key."""
    if not isinstance(doc.data, dict):
        raise SpecError(f"{doc.path}:{doc.line(())}: {what} must be a mapping of keys, "
                        f"found {type(doc.data).__name__}")
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
