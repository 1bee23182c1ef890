"""The images each side of a diff holds, as a report's header lists them: a pair made by
``diff --pair`` (regression/pairing.py) is compared under the name ``BASE → HEAD``, which
is its base alias on the base side and its head alias on the head side."""

from __future__ import annotations

from collections.abc import Sequence

#: how a paired image's name joins its base and head aliases
ARROW = " → "


def own_aliases(envs: Sequence[str], side: str) -> tuple[str, ...]:
    """The images a side holds, each once, by its own alias."""
    pick = 0 if side == "base" else -1
    return tuple(dict.fromkeys(env.split(ARROW)[pick] for env in envs))


def paired_names(envs: Sequence[str]) -> tuple[str, ...]:
    """The paired names (``B → H``) among ``envs``, each once."""
    return tuple(dict.fromkeys(env for env in envs if ARROW in env))
