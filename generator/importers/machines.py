"""Which machine each imported result ran on: a machine read from a manifest, results grouped
by machine, an import refused when one file mixes machines, and a file split per machine
(`--split-by machine`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..errors import BenchledgerError, Problem
from .common import Imported

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Machine:
    """What a result file records of the machine it ran on: the host (name, CPU, OS) with its
    accelerators; None or empty where the file records nothing. `naming` says whose names the
    accelerators carry (llama-bench: the backend, since CUDA, ROCm and Vulkan describe one GPU
    differently); names are compared only between files of one naming."""

    name: str | None = None
    cpu: str | None = None
    os: str | None = None
    accelerators: tuple[str, ...] = ()
    naming: str | None = None

    def described(self) -> str:
        """'minibox (Linux 3.13.0-55-generic)', 'AMD EPYC 7763 with NVIDIA A100, NVIDIA A100'."""
        host = " ".join(x for x in (self.name, f"({self.os})" if self.os else None) if x) or None
        cpu = self.cpu if not host else (f"{host}, {self.cpu}" if self.cpu else host)
        gpus = ", ".join(self.accelerators)
        shown = " with ".join(x for x in (cpu, gpus) if x)
        return shown[:200] or "a machine the file does not describe"


def machine_of(manifest: dict[str, Any], naming: str | None = None) -> Machine:
    """The machine a manifest's `host` and `accelerators` sections describe."""
    found, listed = manifest.get("host"), manifest.get("accelerators")
    host: dict[str, Any] = found if isinstance(found, dict) else {}
    gpus: list[Any] = listed if isinstance(listed, list) else []
    names = tuple(str(g["name"]) for g in gpus if isinstance(g, dict) and g.get("name"))

    def text(key: str) -> str | None:
        value = host.get(key)
        return str(value).strip() or None if value is not None else None

    return Machine(name=text("name"), cpu=text("cpu"), os=text("os"), accelerators=names, naming=naming)


def same_machine(a: Machine, b: Machine) -> bool:
    """One machine, unless a host field both record differs, or the accelerators of one are not
    all among the other's (a run on GPU 0, GPU 1 or both is still that machine: the devices a
    run chose are its condition, not another machine)."""
    if any(x and y and x != y for x, y in ((a.name, b.name), (a.cpu, b.cpu), (a.os, b.os))):
        return False
    if not (a.accelerators and b.accelerators) or a.naming != b.naming:
        return True
    few, many = sorted((Counter(a.accelerators), Counter(b.accelerators)), key=lambda c: c.total())
    return not few - many


def _merged(a: Machine, b: Machine) -> Machine:
    gpus = max((a.accelerators, b.accelerators), key=len)
    return Machine(
        name=a.name or b.name, cpu=a.cpu or b.cpu, os=a.os or b.os, accelerators=gpus, naming=a.naming or b.naming
    )


@dataclass(kw_only=True)
class OnMachine(Generic[T]):
    """The items (files, tests) measured on one machine, and where they are (for messages)."""

    machine: Machine
    items: list[T]
    where: list[str]


def by_machine(items: Iterable[tuple[T, Machine, str]]) -> list[OnMachine[T]]:
    """Items grouped by the machine they ran on, in order of first appearance; `where` names
    each group's places (file names, or 'file lines 1-40'), each once."""
    groups: list[OnMachine[T]] = []
    for item, machine, where in items:
        group = next((g for g in groups if same_machine(g.machine, machine)), None)
        if group is None:
            groups.append(OnMachine(machine=machine, items=[item], where=[where]))
            continue
        group.machine = _merged(group.machine, machine)
        group.items.append(item)
        if where not in group.where:
            group.where.append(where)
    return groups


def refuse_machines(groups: Sequence[OnMachine[Any]]) -> None:
    """Machines never merge: inputs from two machines are refused in one line naming both."""
    if len(groups) < 2:
        return
    a, b = groups[0], groups[1]
    more = f" and {len(groups) - 2} more" if len(groups) > 2 else ""
    message = (
        f"comes from another machine than {_places(a.where)}: {b.machine.described()}, not "
        f"{a.machine.described()}{more}; a run is measured on one machine, so import each machine's results as "
        "its own run, or give --split-by machine to write one run per machine"
    )
    raise BenchledgerError(Problem(file=_places(b.where), message=message))


def _places(where: list[str]) -> str:
    return ", ".join(where[:3]) + (f" (+{len(where) - 3} more)" if len(where) > 3 else "")


def per_machine(
    files: Sequence[tuple[str, bytes]],
    parse: Callable[[Sequence[tuple[str, bytes]]], Imported],
    machine: Callable[[Imported], Machine] | None = None,
) -> list[tuple[OnMachine[tuple[str, bytes]], Imported]]:
    """The files grouped by the machine each records (its manifest's host and accelerators, or
    what the importer's `machine` reads), each group read into one run: the one rule every
    importer that takes several files follows."""
    recorded = machine or (lambda imported: machine_of(imported.manifest))
    if len(files) == 1:
        imported = parse(files)
        return [(OnMachine(machine=recorded(imported), items=list(files), where=[files[0][0]]), imported)]
    groups = by_machine((f, recorded(parse([f])), f[0]) for f in files)
    return [(g, parse(g.items)) for g in groups]
