"""Why a red cell is red: one triage class per failing check of a run, with its evidence.

Pure: the facts the store holds about a check (this run's attempts, the same check's other
runs on the same image, what digest was expected, what the host's preflight said) in, a
class and the runs, hosts and digests it compared out. Where the facts do not decide, the
class is ``undetermined``, with what was missing: never a guess.

Classes, in the order they are tried (the first that the evidence shows wins):

- ``infrastructure``: the attempts ended in ``error`` (engine, registry, scheduler);
- ``host fault``: the host failed preflight or was quarantined around the run, or the same
  digest passes on another host of the same class;
- ``definition changed``: the check's definition (its command, expected output, version:
  spec.definition_hash) is not the one its earlier runs of this image had, and it never
  passed under the new one: the spec changed, not necessarily the image. Every later rule
  compares only with runs of the same definition;
- ``flaky``: mixed outcomes across this run's attempts, or pass and fail interleaved over the
  runs of the same digest on the same host (a pass after a failure, or an earlier run with
  mixed attempts);
- ``regression`` (same digest): passes, then a streak of failures up to this run on the same
  digest and host: never flaky; what changed is around the image;
- ``image drift``: the run's digest is not the one the catalog pins or the baseline ran (and the
  check did not fail on that digest too: then the drift explains nothing);
- ``regression``: the check passed on the previous digest of this image on the same host
  class, and fails now on every attempt and every host that ran this digest;
- ``new check``: no earlier verdict of the check on this image; ``never passed``: earlier
  verdicts, none a pass."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..words import count

FAILING = ("fail", "crash", "timeout", "error")


@dataclass(frozen=True)
class Seen:
    """The final verdict of the same check in another run of the same image (any digest)."""

    run: str
    digest: str
    host: str
    host_class: str
    verdict: str
    started: str  # ISO time: orders the history
    definition: str = ""  # spec.definition_hash of the check in that run ("" unknown)


@dataclass(frozen=True)
class Case:
    check: str
    run: str
    digest: str
    host: str
    host_class: str
    started: str
    attempts: tuple[str, ...]  # this run's statuses, in attempt order
    history: tuple[Seen, ...] = ()  # other runs of this check on this image
    expected_digest: str | None = None  # what the catalog pins, or the baseline ran
    expected_from: str = ""  # "the catalog" | "baseline v0.2"
    # preflight failures / quarantine of this host around the run
    host_problems: tuple[str, ...] = ()
    problem_runs: tuple[str, ...] = ()  # the runs whose meta recorded them
    definition: str = ""  # spec.definition_hash of the check in this run ("" unknown)


@dataclass(frozen=True)
class Triage:
    cls: str  # one of the classes the module docstring lists
    reason: str
    runs: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    digests: tuple[str, ...] = ()
    details: tuple[str, ...] = ()  # e.g. the inventory diff of a drift (added later)


def final(attempts: tuple[str, ...]) -> str:
    if "pass" in attempts and any(s in FAILING for s in attempts):
        return "flaky"
    return attempts[-1] if attempts else "missing"


def _short(text: str) -> str:
    return text.split(":", 1)[1][:12] if text.startswith("sha256:") else text[:12]


def _here(case: Case) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    return (case.run,), (case.host,), (case.digest,)


def _same(case: Case) -> list[Seen]:
    return [s for s in case.history if s.digest == case.digest and s.host_class == case.host_class]


def _this_run(case: Case, verdict: str) -> Triage | None:
    if verdict == "error":  # so is a run whose every attempt ended in error (final: the last)
        return Triage(
            "infrastructure",
            "the attempts ended in error (engine, registry or scheduler): the run says "
            "nothing about the image",
            *_here(case),
        )
    if case.host_problems:
        runs = (case.run, *(r for r in dict.fromkeys(case.problem_runs) if r != case.run))
        why = f"host {case.host}: " + "; ".join(case.host_problems)
        return Triage("host fault", why, runs, (case.host,), (case.digest,))
    if verdict == "flaky":
        return Triage(
            "flaky",
            f"mixed outcomes across this run's attempts ({', '.join(case.attempts)})",
            *_here(case),
        )
    return None


def _same_digest(case: Case) -> Triage | None:
    same = _same(case)
    elsewhere = [s for s in same if s.host != case.host and s.verdict == "pass"]
    if elsewhere:
        s = max(elsewhere, key=lambda x: x.started)
        return Triage(
            "host fault",
            f"the same digest passes on host {s.host} of the same class "
            f"({case.host_class}, run {s.run[:8]}) and fails on {case.host}",
            (case.run, s.run),
            (case.host, s.host),
            (case.digest,),
        )
    repeats = sorted((s for s in same if s.host == case.host), key=lambda s: s.started)
    if not any(s.verdict in ("pass", "flaky") for s in repeats):
        return None
    return _interleaved(case, repeats) or _streak(case, repeats)


def _interleaved(case: Case, repeats: list[Seen]) -> Triage | None:
    seq = sorted([*((s.started, s.verdict) for s in repeats), (case.started, "fail")])
    mixed = [s for s in repeats if s.verdict == "flaky"]
    after_fail = any(
        v == "pass" and any(w in FAILING for _, w in seq[:i]) for i, (_, v) in enumerate(seq)
    )
    if not mixed and not after_fail:
        return None
    passed = [s for s in repeats if s.verdict in ("pass", "flaky")]
    said = "".join("P" if v == "pass" else "F" if v in FAILING else "~" for _, v in seq)
    return Triage(
        "flaky",
        f"the same digest on the same host passed and failed in turn over {len(seq)} runs "
        f"({said}, oldest first, P pass, F fail, ~ mixed attempts; e.g. passed in run "
        f"{passed[-1].run[:8]})",
        (case.run, *(s.run for s in passed[-3:])),
        (case.host,),
        (case.digest,),
    )


def _streak(case: Case, repeats: list[Seen]) -> Triage:
    """Passes, then only failures since, on the same digest and host: not flaky. The image did
    not change, so what changed is around it (the host, its driver, data or environment)."""
    passed = [s for s in repeats if s.verdict == "pass"]
    last = passed[-1]
    since = [s for s in repeats if s.started > last.started]
    failed = len(since) + 1  # this run too
    return Triage(
        "regression",
        f"the same digest passed on host {case.host} in {count(len(passed), 'run')} (the last "
        f"run {last.run[:8]}) and failed in {'the' if failed == 1 else 'all'} "
        f"{count(failed, 'run')} since, this one included: a streak on an unchanged image, so "
        "what changed is around it (host, driver, data or environment)",
        (last.run, *(s.run for s in since[-3:]), case.run),
        (case.host,),
        (case.digest,),
    )


def _drift(case: Case) -> Triage | None:
    on_expected = [s for s in case.history if s.digest == case.expected_digest]
    if (
        case.expected_digest
        and case.expected_digest != case.digest
        # else the drift explains nothing
        and (not on_expected or any(s.verdict == "pass" for s in on_expected))
    ):
        return Triage(
            "image drift",
            f"the image ran as {_short(case.digest)}, not the digest {case.expected_from} "
            f"names ({_short(case.expected_digest)}): the tag moved",
            (case.run,),
            (case.host,),
            (case.expected_digest, case.digest),
        )
    return None


def _history(case: Case) -> Triage:
    any_before = [s for s in case.history if s.started < case.started]
    if not any_before:
        return Triage(
            "new check",
            f"no earlier verdict of {case.check} on this image to compare with",
            *_here(case),
        )
    if not any(s.verdict == "pass" for s in any_before):
        return Triage(
            "never passed",
            f"{case.check} failed in {'the' if len(any_before) == 1 else 'all'} "
            f"{count(len(any_before), 'earlier run')} of this image "
            f"(latest run {any_before[-1].run[:8]}) and never passed",
            *_here(case),
        )
    earlier = sorted(
        (s for s in any_before if s.digest != case.digest and s.host_class == case.host_class),
        key=lambda s: s.started,
    )
    if earlier:
        return _from_previous_digest(case, earlier[-1])
    return Triage(
        "undetermined",
        f"{case.check} passed before on this image, but not on another digest of the "
        f"same host class ({case.host_class}) to compare with",
        *_here(case),
    )


def _from_previous_digest(case: Case, prev: Seen) -> Triage:
    same = _same(case)
    other_hosts = [s for s in same if s.host != case.host]
    if prev.verdict == "pass" and all(s.verdict in FAILING for s in same):
        hosts = (case.host, *sorted({s.host for s in other_hosts}))
        return Triage(
            "regression",
            f"passed on the previous digest {_short(prev.digest)} (run {prev.run[:8]}, "
            f"host {prev.host}, {case.host_class}); fails now on every attempt and on "
            f"{len(hosts)} host{'s' if len(hosts) > 1 else ''} with {_short(case.digest)}",
            (prev.run, case.run, *(s.run for s in other_hosts)),
            hosts,
            (prev.digest, case.digest),
        )
    return Triage(
        "undetermined",
        f"the previous digest {_short(prev.digest)} ended {prev.verdict} too "
        f"(run {prev.run[:8]}); the change that broke {case.check} is older",
        (prev.run, case.run),
        (prev.host, case.host),
        (prev.digest, case.digest),
    )


def _definition(case: Case) -> tuple[Triage | None, Case]:
    """A check whose definition changed since the earlier runs, and that never passed under
    its new one: "definition changed", naming the hashes and the run that passed under the
    old one. Else the case with its history narrowed to runs of the same definition (an
    unknown definition, from before hashes were stored, compares with any)."""
    if not case.definition:
        return None, case
    other = [s for s in case.history if s.definition and s.definition != case.definition]
    same = [s for s in case.history if s.definition == case.definition or not s.definition]
    passed_before = [s for s in other if s.verdict == "pass"]
    if passed_before and not any(s.verdict == "pass" for s in same if s.definition):
        s = max(passed_before, key=lambda x: x.started)
        changed = Triage(
            "definition changed",
            f"the check's definition changed ({s.definition[:8]} in run {s.run[:8]}, where "
            f"it passed → {case.definition[:8]} here: its command, expected output or "
            "version); it never passed under the new definition, so the spec may be what "
            "fails, not the image",
            (case.run, s.run),
            (case.host,) if s.host == case.host else (case.host, s.host),
            (case.digest,) if s.digest == case.digest else (s.digest, case.digest),
        )
        return changed, case
    return None, replace(case, history=tuple(same))


def classify(case: Case) -> Triage | None:
    """The triage of one check of one run (the module's rules, in order); None when it
    did not fail."""
    verdict = final(case.attempts)
    if verdict not in FAILING and verdict != "flaky":
        return None
    here = _this_run(case, verdict)
    if here is not None:
        return here
    changed, case = _definition(case)
    return changed or _same_digest(case) or _drift(case) or _history(case)
