"""Placement: which host (and which of its slots) runs each task. Pure.

List scheduling, longest task first, onto the earliest-free matching slot:

- a host offers ``slots`` CPU slots (CPU tasks, and GPU images run ``--cpu-only``)
  and one slot per GPU (GPU tasks take ``gpus`` GPUs of an allowed arch on one
  host, each task pinned to its own GPUs);
- ties prefer hosts without GPUs for CPU work (as ``hosts.match`` does), then the
  inventory's order;
- a task whose requirement no host meets raises ``NoMatchingHostError`` naming the
  nearest hosts and what they lack (``hosts.match``), before anything runs;
- a gang task (``nodes`` > 1) takes its units on ``nodes`` distinct hosts, all from the
  same start to the same end (all or nothing): the hosts whose units free up soonest.
  Fewer matching hosts than nodes is ``NoMatchingHostError`` naming what is missing.

Finding the earliest-free slot uses one lazy min-heap per requirement class:
slot free times only grow, so a stale heap entry is re-keyed when it surfaces.
So a large plan places in about linear time (docs/benchmarks.md, Placement).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ..errors import NoMatchingHostError
from ..hosts.match import Requirement, match, shortfall
from ..spec import HostSpec
from ..words import count


@dataclass(frozen=True)
class Need:
    """What one task asks for: an id, a requirement, an expected duration (seconds)."""

    key: str
    req: Requirement
    duration: float = 60.0
    # host names not to use (a retry after an infrastructure error)
    exclude: frozenset[str] = frozenset()
    label: str = ""  # shown in errors (the image)
    nodes: int = 1  # hosts the task spans, all reserved at once (a gang)

    @property
    def units(self) -> int:
        """Slots the task holds while it runs: per node, times nodes."""
        return max(1, self.req.gpus) * max(1, self.nodes)


@dataclass(frozen=True)
class Assignment:
    key: str
    host: str
    gpus: tuple[int, ...]  # GPU indices on that host (empty for CPU work)
    start: float
    end: float
    hosts: tuple[str, ...] = ()  # a gang's hosts in node-rank order (``host`` is the first)
    node_gpus: tuple[tuple[int, ...], ...] = ()  # the GPU indices it holds on each of them


@dataclass(frozen=True)
class Placement:
    assignments: tuple[Assignment, ...]
    by_key: dict[str, Assignment] = field(default_factory=dict, compare=False)

    @property
    def makespan(self) -> float:
        return max((a.end for a in self.assignments), default=0.0)

    def host_of(self, key: str) -> str:
        return self.by_key[key].host


#: a resource in a requirement class's heap: (free from, host preference, host, resource)
_Entry = tuple[float, int, int, int]


class _Slots:
    """Slot tables of an inventory: resource ids are ints into ``free``."""

    def __init__(self, hosts: tuple[HostSpec, ...]) -> None:
        self.hosts = hosts
        self.free: list[float] = []
        self.owner: list[int] = []  # resource → host position
        self.what: list[int] = []  # resource → GPU index, or -1-slot for CPU slots
        self.cpu: list[list[int]] = []
        self.gpu: list[list[tuple[int, str, str]]] = []  # host → [(rid, vendor, arch)]
        for h, host in enumerate(hosts):
            self.cpu.append([self._add(h, -1 - s) for s in range(host.slots)])
            self.gpu.append([(self._add(h, g.index), g.vendor, g.arch) for g in host.gpus])
        self._classes: dict[tuple[Requirement, tuple[int, ...]], list[_Entry]] = {}

    def _add(self, host: int, what: int) -> int:
        self.free.append(0.0)
        self.owner.append(host)
        self.what.append(what)
        return len(self.free) - 1

    def units(self, req: Requirement, host: int) -> list[int]:
        vendor = req.vendor
        if vendor is None:
            return self.cpu[host]
        return [
            rid for rid, v, a in self.gpu[host] if v == vendor and (not req.archs or a in req.archs)
        ]

    def heap(self, req: Requirement, hosts: tuple[int, ...]) -> list[_Entry]:
        key = (req, hosts)
        heap = self._classes.get(key)
        if heap is None:
            heap = []
            for h in hosts:
                pref = len(self.hosts[h].gpus) if req.backend == "cpu" else 0
                heap.extend((self.free[rid], pref, h, rid) for rid in self.units(req, h))
            heapq.heapify(heap)
            self._classes[key] = heap
        return heap

    def earliest(self, req: Requirement, hosts: tuple[int, ...]) -> list[int]:
        """The resources a task of ``req`` would start on soonest."""
        if req.backend == "cpu" or req.gpus <= 1:
            heap = self.heap(req, hosts)
            while True:
                t, pref, h, rid = heap[0]
                if t == self.free[rid]:
                    heapq.heappop(heap)
                    return [rid]
                heapq.heapreplace(heap, (self.free[rid], pref, h, rid))
        return self.gang(req, hosts, 1)[0]  # several GPUs: the one host that frees them first

    def gang(self, req: Requirement, hosts: tuple[int, ...], nodes: int) -> list[list[int]]:
        """The units of the ``nodes`` hosts that can all start a gang soonest: per host the
        units it needs (``req.gpus`` GPUs, or a CPU slot) that free up first; ties keep
        CPU work off GPU hosts, then the inventory's order."""
        per: list[tuple[float, int, int, list[int]]] = []
        need = 1 if req.backend == "cpu" else max(1, req.gpus)
        for h in hosts:
            units = sorted(self.units(req, h), key=lambda rid: self.free[rid])[:need]
            pref = len(self.hosts[h].gpus) if req.backend == "cpu" else 0
            per.append((self.free[units[-1]], pref, h, units))
        per.sort(key=lambda p: p[:3])
        return [p[3] for p in per[:nodes]]

    def take(self, req: Requirement, hosts: tuple[int, ...], rids: list[int], end: float) -> None:
        for rid in rids:
            self.free[rid] = end
        if req.backend == "cpu" or req.gpus <= 1:
            h = self.owner[rids[0]]
            pref = len(self.hosts[h].gpus) if req.backend == "cpu" else 0
            heapq.heappush(self.heap(req, hosts), (end, pref, h, rids[0]))


def candidates(need: Need, hosts: tuple[HostSpec, ...]) -> tuple[int, ...]:
    """Positions of the hosts that can run ``need`` (NoMatchingHostError when none, or
    fewer than a gang's nodes)."""
    allowed = tuple(h for h in hosts if h.name not in need.exclude) or hosts
    match(need.req, allowed, need.label)  # raises, naming the nearest hosts
    found = tuple(
        i for i, h in enumerate(hosts) if h.name not in need.exclude and not shortfall(need.req, h)
    )
    if not found:  # every matching host is excluded (already tried)
        raise NoMatchingHostError(
            f"no untried host can run {need.label or need.req.backend}: "
            f"tried {', '.join(sorted(need.exclude))}"
        )
    if len(found) < need.nodes:
        raise NoMatchingHostError(
            gang_shortfall(need, hosts, found),
            "add hosts to the inventory (--hosts), or lower the suite's nodes / gpus_per_node",
        )
    return found


def gang_shortfall(need: Need, hosts: tuple[HostSpec, ...], found: tuple[int, ...]) -> str:
    """Why no set of ``need.nodes`` hosts can run a gang task: how many match, and what
    the others lack."""
    what = need.label or need.req.backend
    per = f" with {need.req.gpus} GPU(s) each" if need.req.backend != "cpu" else ""
    ok = ", ".join(hosts[i].name for i in found)
    lines = [
        f"no set of {need.nodes} hosts can run {what} on {need.nodes} nodes{per}: "
        f"{len(found)} of the {len(hosts)} hosts match ({ok})"
    ]
    if len(hosts) < need.nodes:
        lines.append(
            f"  the inventory has {count(len(hosts), 'host')}, the task needs {count(need.nodes, 'node')}"
        )
    for h in hosts:
        lacks = shortfall(need.req, h)
        if lacks:
            lines.append(f"  {h.name}: lacks {', '.join(lacks)}")
        elif h.name in need.exclude:
            lines.append(f"  {h.name}: already tried")
    return "\n".join(lines)


def place(
    needs: tuple[Need, ...] | list[Need],
    hosts: tuple[HostSpec, ...],
    busy: dict[str, float] | None = None,
) -> Placement:
    """Assign every need to host slots: longest (duration × units) first, each on the
    matching slot(s) that free up earliest. ``busy`` gives hosts a start offset."""
    slots = _Slots(hosts)
    if busy:
        for rid, h in enumerate(slots.owner):
            slots.free[rid] = busy.get(hosts[h].name, 0.0)
    cache: dict[tuple[Requirement, frozenset[str], int], tuple[int, ...]] = {}
    order = sorted(needs, key=lambda n: -n.duration * n.units)
    out: list[Assignment] = []
    for need in order:
        ck = (need.req, need.exclude, need.nodes)
        cands = cache.get(ck)
        if cands is None:
            cands = cache[ck] = candidates(need, hosts)
        if need.nodes > 1:
            out.append(_place_gang(slots, need, cands))
            continue
        rids = slots.earliest(need.req, cands)
        start = max(slots.free[r] for r in rids)
        end = start + need.duration
        slots.take(need.req, cands, rids, end)
        h = slots.owner[rids[0]]
        gpus = () if need.req.backend == "cpu" else tuple(sorted(slots.what[r] for r in rids))
        out.append(Assignment(need.key, hosts[h].name, gpus, start, end))
    return Placement(tuple(out), {a.key: a for a in out})


def _place_gang(slots: _Slots, need: Need, cands: tuple[int, ...]) -> Assignment:
    """All of a gang's units, on ``need.nodes`` hosts, from one start to one end."""
    chosen = slots.gang(need.req, cands, need.nodes)
    start = max(slots.free[r] for units in chosen for r in units)
    end = start + need.duration
    for units in chosen:
        for rid in units:
            slots.free[rid] = end  # the single-task heaps re-key these entries when they surface
    names = tuple(slots.hosts[slots.owner[units[0]]].name for units in chosen)
    cpu = need.req.backend == "cpu"
    per = tuple(() if cpu else tuple(sorted(slots.what[r] for r in units)) for units in chosen)
    return Assignment(need.key, names[0], per[0], start, end, hosts=names, node_gpus=per)


def lower_bound(needs: list[Need] | tuple[Need, ...], hosts: tuple[HostSpec, ...]) -> float:
    """A makespan no schedule can beat: the longest task, and for each requirement
    class (and each backend as a whole) its work over the slots that can take it."""
    if not needs:
        return 0.0
    slots = _Slots(hosts)
    bound = max(n.duration for n in needs)
    pools: dict[tuple[Requirement, frozenset[str]], frozenset[int]] = {}
    work: dict[object, float] = {}
    pool_of: dict[object, set[int]] = {}
    for n in needs:
        ck = (n.req, n.exclude)
        if ck not in pools:
            pools[ck] = frozenset(
                r
                for h, host in enumerate(hosts)
                if host.name not in n.exclude and not shortfall(n.req, host)
                for r in slots.units(n.req, h)
            )
            pool_of.setdefault(ck, set()).update(pools[ck])
            pool_of.setdefault(n.req.backend, set()).update(pools[ck])
        for key in (ck, n.req.backend):
            work[key] = work.get(key, 0.0) + n.duration * n.units
    groups = {k: (w, pool_of[k]) for k, w in work.items()}
    for total, pool in groups.values():
        if pool:
            bound = max(bound, total / len(pool))
    return bound
