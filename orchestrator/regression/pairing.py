"""``valorch diff --pair 'rocm6.3_*=rocm6.4_*'``: compare an image with its successor.

A diff pairs the two sides' results by image alias, so across a release no image meets its
successor (``rocm6.3_ubuntu24.04_py3.12_pytorch_2.4`` never meets
``rocm6.4_ubuntu24.04_py3.12_pytorch_2.4``). A pairing rule ``BASE=HEAD`` names both with
globs whose ``*`` stand for the same text on both sides, in order: a base image and a head
image are paired when the base alias matches BASE, the head alias matches HEAD and each
``*`` matched the same text in both. A paired image is compared under the name
``BASE_ALIAS → HEAD_ALIAS``; an image no rule pairs is compared by its own alias, as
without rules.
Rules are tried in the order given; the first that pairs an image wins."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..errors import InputError
from ..render.sides import ARROW
from .rule import Side

_ALLOWED = re.compile(r"^[A-Za-z0-9._*:+-]+$")


@dataclass(frozen=True)
class Rule:
    base: str
    head: str

    def key(self, alias: str, side: str) -> tuple[str, ...] | None:
        """What the ``*`` of this rule's ``side`` glob matched in ``alias`` (None: no match)."""
        glob = self.base if side == "base" else self.head
        parts = ("(.*)" if part == "*" else re.escape(part) for part in re.split(r"(\*)", glob))
        m = re.fullmatch("".join(parts), alias)
        return m.groups() if m else None


def parse(values: Sequence[str]) -> tuple[Rule, ...]:
    """``--pair`` values as rules; anything else is bad input naming the flag (exit 2)."""
    rules = []
    for value in values:
        base, sep, head = value.partition("=")
        base, head = base.strip(), head.strip()
        problem = (
            "takes BASE=HEAD, two alias globs"
            if not sep or not base or not head or "=" in head
            else "may use letters, digits, . _ - : + and * only"
            if not (_ALLOWED.match(base) and _ALLOWED.match(head))
            else "needs as many * on both sides (each * stands for the same text)"
            if base.count("*") != head.count("*")
            else ""
        )
        if problem:
            raise InputError(f"--pair {value!r}: {problem}", "e.g. --pair 'rocm6.3_*=rocm6.4_*'")
        rules.append(Rule(base, head))
    return tuple(rules)


def pairs(
    base_envs: Sequence[str], head_envs: Sequence[str], rules: Sequence[Rule]
) -> dict[str, str]:
    """base alias → the head alias it is compared with, for every base image a rule pairs
    (one head image per base image and one base image per head image, the first rule first)."""
    paired: dict[str, str] = {}
    taken: set[str] = set()
    for rule in rules:
        heads: dict[tuple[str, ...], str] = {}
        for h in head_envs:
            k = rule.key(h, "head")
            if k is not None and h not in taken:
                heads.setdefault(k, h)
        for b in base_envs:
            if b in paired:
                continue
            k = rule.key(b, "base")
            if k is not None and k in heads and heads[k] not in taken and heads[k] != b:
                paired[b] = heads[k]
                taken.add(heads[k])
    return paired


def _renamed(side: Side, names: dict[str, str], kept: frozenset[str] = frozenset()) -> Side:
    """``side`` with each env of ``names`` under its new name; an env in ``kept`` is there
    under its own name as well (compared with itself, and with its successor)."""
    return replace(
        side,
        observations=tuple(replace(o, env=names.get(o.env, o.env)) for o in side.observations)
        + tuple(o for o in side.observations if o.env in kept),
        digests=tuple((names.get(env, env), digest) for env, digest in side.digests)
        + tuple((env, digest) for env, digest in side.digests if env in kept),
    )


def apply(base: Side, head: Side, rules: Sequence[Rule]) -> tuple[Side, Side, dict[str, str]]:
    """Both sides with each paired image under the name ``BASE → HEAD`` (as rule.compare names a
    one-image-each diff), and the pairs (base alias → head alias). A base image the head holds too,
    under its own alias, is also compared with itself: a release that keeps the old image beside the
    new one shows both comparisons, and no check of the kept image is "new"."""
    paired = pairs(base.envs, head.envs, rules)
    if not paired:
        return base, head, {}
    joint = {b: f"{b}{ARROW}{h}" for b, h in paired.items()}
    kept = frozenset(b for b in paired if b in head.envs)
    return (
        _renamed(base, joint, kept),
        _renamed(head, {h: joint[b] for b, h in paired.items()}),
        paired,
    )
