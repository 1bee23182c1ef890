"""How the suite splits over parallel workers (pytest-xdist, ``--dist loadgroup``;
docs/testing.md, "Parallel workers").

A file's tests stay together on one worker, so that its module fixtures (a run shared by its
tests, a built image) are made once. The files that use a resource with a fixed place on
this machine share one worker, in one group: a second engine's data root and bridge
(``engine2``, ``small_engine``), the Slurm cluster its script starts (``cluster``). Files whose
resources meet in one file are joined, so that no two workers ever hold one resource."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# session fixtures whose resource has a fixed name on the machine (a directory, a bridge, daemons)
FIXED_PLACE = ("engine2", "small_engine", "cluster")


def groups(fixtures_by_file: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """Each file's group: its own path, or the joined name of the fixed-place resources it
    uses with every file that shares one of them."""
    parent: dict[str, str] = {r: r for r in FIXED_PLACE}

    def root(r: str) -> str:
        while parent[r] != r:
            r = parent[r]
        return r

    used = {f: sorted({n for n in names if n in parent}) for f, names in fixtures_by_file.items()}
    for resources in used.values():
        for other in resources[1:]:
            parent[root(other)] = root(resources[0])
    members: dict[str, list[str]] = {}
    for r in FIXED_PLACE:
        members.setdefault(root(r), []).append(r)
    return {
        f: "+".join(members[root(resources[0])]) if resources else f
        for f, resources in used.items()
    }
