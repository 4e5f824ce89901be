"""Which way a grid reads: each factor's base level, from the claims that take the grid
apart (their baseline's level, for each factor their two runs differ in), else from the
attribution's `base:`. A factor neither orients is read as a gain by the fit itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..format.front_matter import Attribution, Claim
from ..ledger.records import Ledger, Run


@dataclass(frozen=True, kw_only=True)
class Orientation:
    """Each factor's base level where something chose it, and what chose it; the claim path
    the credit is about ((baseline cell, candidate cell) of the first claim taking the grid apart)."""

    base: Mapping[str, str]
    why: Mapping[str, str]
    path: tuple[tuple[str, ...], tuple[str, ...]] | None
    conflicts: tuple[tuple[str, str], ...] = ()  # (field, message)


def takes_apart(ledger: Ledger, a: Attribution) -> list[Claim]:
    """The comparison claims (of any report) between two of the grid's runs, on its metric."""
    return [
        c
        for _, c in ledger.claims
        if c.kind == "comparison"
        and c.metric == a.metric
        and c.baseline in a.runs
        and c.candidate in a.runs
        and c.baseline in ledger.runs
        and c.candidate in ledger.runs
    ]


def orientation(ledger: Ledger, a: Attribution) -> Orientation:
    """Base levels from the claims' baselines (factor by factor, the claims that vary it), then
    from `base:`; disagreements are kept as conflicts for `check`."""
    base: dict[str, str] = {}
    why: dict[str, str] = {}
    conflicts: list[tuple[str, str]] = []
    path = None
    for claim in takes_apart(ledger, a):
        assert claim.baseline is not None and claim.candidate is not None
        before = levels_of(ledger.runs[claim.baseline], a)
        after = levels_of(ledger.runs[claim.candidate], a)
        if path is None and before != after:
            path = (before, after)
        for k, f in enumerate(a.factors):
            if before[k] == after[k]:
                continue
            if f in base and base[f] != before[k]:
                message = (
                    f"claims {why[f].removeprefix('the baseline of claim ')} and {claim.id!r} take this grid apart "
                    f"from opposite ends of {f} ({base[f]} and {before[k]}); each factor's base level comes from "
                    "the claims' baselines, so they must agree: correct one claim's baseline and candidate"
                )
                conflicts.append(("factors", message))
                continue
            base.setdefault(f, before[k])
            why.setdefault(f, f"the baseline of claim {claim.id!r}")
    for f, level in a.base.items():
        given = str(level)
        if f in base and base[f] != given:
            message = (
                f"base.{f} is {given} but {why[f]} has {f}={base[f]}; the claim decides the orientation: "
                f"remove base.{f} or set it to {base[f]}"
            )
            conflicts.append((f"base.{f}", message))
        elif f not in base:
            base[f], why[f] = given, "base: in the attribution"
    return Orientation(base=base, why=why, path=path, conflicts=tuple(conflicts))


def levels_of(run: Run, a: Attribution) -> tuple[str, ...]:
    env = run.environment()
    return tuple(str(env.get(key, "(absent)")) for key in a.factors.values())
