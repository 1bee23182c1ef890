"""Read YAML specs and validate them, with errors that name file, line and key.

The parsed document keeps its node tree so that a pydantic error location
(``("suites", 1, "deadline")``) can be turned back into a line number. The loader is
libyaml's ``CSafeLoader`` where PyYAML has it: 5–10× faster than ``SafeLoader``.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, get_args

import yaml
from pydantic import BaseModel, ValidationError

from .bounds import INT64_MAX, INT64_MIN, MAX_INT_LITERAL
from .errors import SpecError

M = TypeVar("M", bound=BaseModel)


@dataclass(eq=False)
class Document:
    """A parsed YAML file: its data and where each key and item came from."""

    path: Path
    data: Any
    node: yaml.Node | None

    def line(self, loc: tuple[Any, ...]) -> int:
        """1-based line of the deepest node along ``loc`` that exists."""
        node = self.node
        line = node.start_mark.line + 1 if node is not None else 1
        for key in loc:
            if isinstance(node, yaml.MappingNode):
                found = next(((k, v) for k, v in node.value if k.value == str(key)), None)
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


# libyaml when built with it: much faster than the pure-Python loader
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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


def _int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    try:  # a long literal is refused before Python converts it; the value as JSON's are
        if len(node.value) > MAX_INT_LITERAL:
            raise ValueError
        return bounded_int(str(yaml.SafeLoader.construct_yaml_int(loader, node)))
    except ValueError:
        raise yaml.constructor.ConstructorError(
            None, None, _too_large(node.value), node.start_mark
        ) from None


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
_Loader.add_constructor("tag:yaml.org,2002:int", _int)


def bounded_int(text: str) -> int:
    """``int(text)`` for a JSON number, refused (ValueError) past 64 bits before Python
    converts it: the ``parse_int`` of every ``json.loads`` of a user's document."""
    if len(text) > MAX_INT_LITERAL or not INT64_MIN <= (value := int(text)) <= INT64_MAX:
        raise ValueError(_too_large(text))
    return value


def _too_large(text: str) -> str:
    cut = f"{text[:24]}{'…' if len(text) > 24 else ''}"
    return f"integer {cut} is larger than any number valorch keeps (64-bit integers)"


#: the most YAML nodes (and characters of scalars) a document may expand to through its
#: aliases: an alias bomb (nine anchors of nine aliases each: a billion strings) is refused
#: before anything is built from it
MAX_EXPANDED = 8 << 20


def expanded_size(root: yaml.Node) -> int:
    """Nodes plus scalar characters of ``root`` with every alias expanded, computed once per
    shared node (linear in the document, however large its expansion)."""
    memo: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in memo:
            continue
        if not children_done and id(node) in visiting:  # an alias inside its own anchor
            return MAX_EXPANDED + 1
        visiting.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            memo[id(node)] = 1 + len(node.value)
            continue
        kids = (
            [n for pair in node.value for n in pair]
            if isinstance(node, yaml.MappingNode)
            else list(node.value)
        )
        if children_done:
            memo[id(node)] = min(MAX_EXPANDED + 1, 1 + sum(memo.get(id(k), 0) for k in kids))
        else:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in memo)
    return memo[id(root)]


#: the most a user file of each kind may hold (bytes): a file over its cap is refused before
#: it is read, so that /dev/zero, a 200 MB mistake or a runaway generator cannot fill memory
CAPS: dict[str, int] = {
    "yaml": 4 << 20,  # job specs, hosts files, catalog files, known issues, matrix documents
    "text": 16 << 20,  # reStructuredText pages and other text a command reads
    "export": 128 << 20,  # results export documents (JSON)
}


_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def read_bytes(path: Path, what: str = "file", cap: int = CAPS["yaml"]) -> bytes:
    """The bytes of a user's file, read once: a regular file (a FIFO, device, directory or
    socket is refused without blocking), at most ``cap`` bytes; every failure is a SpecError
    (exit 2) naming the file."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        raise SpecError(f"{path}: no such file", f"check the path of the {what}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SpecError(
                f"{path}: a loop of symbolic links, not a {what}", "point it at a real file"
            ) from None
        raise SpecError(f"{path}: cannot read the {what}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise SpecError(
                f"{path}: is {_KINDS.get(stat.S_IFMT(mode), 'not a regular file')}, not a {what}",
                "pass a regular file (valorch reads a file once; copy a pipe's output to a file)",
            )
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise SpecError(f"{path}: cannot read the {what}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if size > cap:
        raise SpecError(
            f"{path}: too large for a {what} (over {cap >> 20} MiB)",
            "check that it is the file you meant",
        )
    return b"".join(chunks)


def decode(path: Path, raw: bytes) -> str:
    """UTF-8 text of ``raw`` (a leading byte-order mark dropped), or a SpecError naming the
    line and byte that are not UTF-8."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpecError(
            f"{path}:{line}:{column}: not UTF-8 text (byte 0x{raw[exc.start]:02x})",
            "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8), or check that it is the "
            "file you meant",
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: Path, what: str = "file", cap: int = CAPS["text"]) -> str:
    """A user's text file (``read_bytes``), as strict UTF-8; every failure is a SpecError."""
    return decode(Path(path), read_bytes(path, what, cap))


def load(path: Path, what: str = "YAML file") -> Document:
    """A user's YAML file, read by ``read_bytes`` and parsed by ``parse``."""
    path = Path(path)
    return parse(read_text(path, what, CAPS["yaml"]), path)


def parse(text: str, path: Path) -> Document:
    """Parse YAML text once (node tree and data), refusing duplicate keys."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            check_duplicates(path, node)
            if expanded_size(node) > MAX_EXPANDED:
                raise SpecError(
                    f"{path}: its aliases (*name) expand to more than {MAX_EXPANDED >> 20} M "
                    "nodes and characters",
                    "write the values out, or use fewer nested aliases",
                )
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = exc.problem or str(exc)
        if "larger than" in problem:
            hint = "write a number that fits 64 bits (or quote it where text is meant)"
        elif "not one" in problem:
            hint = "quote the value"
        else:
            hint = "fix the YAML syntax at that line (indentation, quoting, a missing colon)"
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
    """Validate a document against a model or raise a SpecError naming file, line and key
    of every mistake at once (an unknown key with the nearest known one)."""
    if not isinstance(doc.data, dict):
        raise SpecError(
            f"{doc.path}:{doc.line(())}: {what} must be a mapping of keys, "
            f"found {type(doc.data).__name__}"
        )
    try:
        return model.model_validate(doc.data)
    except ValidationError as exc:
        found = problems_of(doc, exc, model)
        lines = [p.text(doc.path, what) for p in found[:MAX_PROBLEMS]]
        if len(found) > MAX_PROBLEMS:
            lines.append(f"… and {len(found) - MAX_PROBLEMS} more")
        raise SpecError("\n".join(lines)) from None


#: the most mistakes one file reports (the rest are counted)
MAX_PROBLEMS = 50


@dataclass(frozen=True)
class Problem:
    """One mistake in a user's YAML file: where (line, key) and what, with what to do."""

    line: int
    key: str  # "suites.1.deadline"; "(top level)" for the document itself
    message: str
    hint: str | None = None

    def text(self, path: Path | str, what: str) -> str:
        return f"{path}:{self.line}: {what}: key '{self.key}': {self.message}"


def nearest(word: str, known: Iterable[str], n: int = 1) -> list[str]:
    """The known names closest to a mistyped one (difflib's ratio), best first."""
    import difflib

    return difflib.get_close_matches(word, list(known), n=n, cutoff=0.6)


def did_you_mean(word: str, known: Iterable[str], n: int = 1) -> str:
    """The text "; did you mean 'x'?" naming the nearest known names ("" when none is near)."""
    near = nearest(word, known, n)
    return f"; did you mean {' or '.join(repr(k) for k in near)}?" if near else ""


def problems_of(
    doc: Document, exc: ValidationError, model: type[BaseModel] | None = None
) -> list[Problem]:
    """Every error of a pydantic validation as a Problem at its line and key; an unknown
    key or a value outside a fixed set says the nearest allowed one."""
    out = []
    errors = exc.errors()
    deeper = {tuple(e["loc"][:n]) for e in errors for n in range(len(e["loc"]))}
    for err in errors:
        loc = tuple(err["loc"])
        if err["type"] == "too_short" and loc in deeper:
            continue  # a consequence of an error inside the list, reported there
        key = ".".join(str(p) for p in loc) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            near = did_you_mean(str(loc[-1]), _fields_at(model, loc[:-1])) if model else ""
            msg = f"unknown key{near or ' (remove it or check its spelling)'}"
        elif err["type"] == "missing":
            msg = "required key is missing"
        elif err["type"] == "literal_error" and isinstance(err.get("input"), str):
            allowed = re.findall(r"'([^']*)'", str((err.get("ctx") or {}).get("expected", "")))
            msg += did_you_mean(err["input"], allowed)
        elif err["type"] == "string_type" and isinstance(err.get("input"), (bool, int, float)):
            # YAML reads true, no, 1.10 and 0755 as values, not as the text written
            kind = "boolean" if isinstance(err["input"], bool) else "number"
            msg += f" (YAML read it as the {kind} {err['input']!r}, not as text: quote it)"
        out.append(Problem(doc.line(loc), key, msg))
    return out


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[str, ...]:
    """The keys the model nested at ``loc`` takes (``("suites", 1)`` → SuiteRef's)."""
    current: type[BaseModel] | None = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part)) if current is not None else None
        current = _model_in(field.annotation) if field is not None else None
        if current is None:
            return ()
    return tuple(current.model_fields) if current is not None else ()


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds (``tuple[SuiteRef, ...]``, ``PytestSpec | None``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None
