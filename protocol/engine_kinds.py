"""What each database engine can do, asked by capability rather than by name (issue 30).

One `EngineKind` per value of a scenario's or an inventory host's `engine`. The core
asks `kind(engine).ring` (can a node join by scale_out), `.block_load` (does a built-in
workload's load insert blocks), `.dialect` (which statement slot of a workload file it
runs) and so on, instead of comparing the engine's name with a list of names kept where
the question is asked.

Each engine package declares its kinds itself (``KINDS`` in ``loadtower.engines.NAME``)
and registers them under the entry-point group ``loadtower.engines``
(``NAME = "package:KINDS"``); they are found here, once, on the first question asked
(not at import: an engine package imports this module for `EngineKind`), so a third
party can ship an engine as its own distribution. The core never imports an
engine package: it reaches an engine's code through the ``module:attribute`` strings of
its kind (``agent_backend``, ``native_feed``, ``hooks``, ``sandbox_service``,
``sandbox_ring``, ``workload_file``).

The protocol room holds it because both sides ask: the orchestrator's checks, plans and
phases, and the agents.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Literal

Compaction = Literal["action", "statement", "none"]


@dataclass(frozen=True)
class EngineKind:
    name: str  # the `engine` value of a scenario, a target or an inventory host
    title: str  # how messages and docs name it
    default_port: int  # the client port when the inventory gives none
    family: str  # engines that share a driver, a node protocol and names (one package's)
    dialect: str  # the statement slot of a workload file it runs (its family's slot)
    ring: bool  # a standby node joins a ring: scale_out can add one
    per_host_port: bool  # each inventory host may give its own client port
    tls_files: bool  # [ENGINE] tls_*_file keys: read here, sent to the agents as PEM
    block_load: bool  # a built-in workload's load phase inserts blocks (insert_batch)
    flush_action: bool  # a flush phase runs the inventory's `flush` action on its hosts
    compaction: Compaction  # action: the `compact` action; statement: loadtower's own
    coordinator_latency: bool  # nodes keep system_views.coordinator_*_latency tables
    # the agents' backend of its targets, "module:Class" (agents/backends.py, Backend)
    agent_backend: str
    # the target keys only it takes, "module:Class" of a pydantic model of them
    # (scenarios/models.py adds them to Target; scenarios/checked_types.py); None: none
    target_keys: str | None = None
    # the orchestrator's hooks, name -> "module:function" (scenarios/engine_hooks.py)
    hooks: Mapping[str, str] = field(default_factory=dict)
    compact_what: str = "its compaction statement"  # what a `statement` compaction runs
    # its host in the loopback sandbox, "module:attribute" (sandbox/engine_services.py);
    # None: the sandbox runs none (or its nodes are the sandbox's ring: sandbox_ring)
    sandbox_service: str | None = None
    # its nodes make the sandbox's ring, "module:attribute" of a RingEngine
    # (sandbox/ring_engine.py; one registered engine names one); None: they do not
    sandbox_ring: str | None = None
    # its dialect's slot of workload files, "module:attribute" of a FileSlot (its models and
    # rendering: scenarios/workloads/file_slot.py); None: its targets run no workload files
    workload_file: str | None = None
    # a package of TOML text it adds to built-in files (scenarios/NAME.toml: its target in
    # a built-in scenario; workloads/SCHEMA.toml: its slot in a shipped workload file;
    # scenarios/builtin_additions.py); None: it adds nothing
    builtin_additions: str | None = None
    # the agents' feed of its native load core, "module:Class" (agents/native_feed.py,
    # NativeFeed: the Rust core, its package's native/ crate); None: Python lanes only
    native_feed: str | None = None
    # a scenario, target or direct run that names no engine runs this one (one registered
    # engine says so: default_engine)
    default: bool = False
    # the session drivers a target of it may name as its `driver` (besides "auto")
    drivers: tuple[str, ...] = ()
    # the kind of the event its agents send to say which path a phase's sends take (its
    # native feed's `path_event`); the run keeps those events as they are named
    path_event: str | None = None

    @property
    def only_keys(self) -> tuple[str, ...]:
        """The names of the target keys only it takes (its `target_keys` model's)."""
        if self.target_keys is None:
            return ()
        return tuple(load_attribute(self.target_keys).model_fields)

    @property
    def rust_core(self) -> bool:
        """The agents' native load core drives it (its kind names a feed)."""
        return self.native_feed is not None


GROUP = "loadtower.engines"


class EngineRegistryError(RuntimeError):
    """The registered engines cannot be used (none, or two with one name)."""


def _loaded(point: EntryPoint) -> Iterable[EngineKind]:
    found = point.load()
    kinds = (found,) if isinstance(found, EngineKind) else tuple(found)
    if not kinds or not all(isinstance(k, EngineKind) for k in kinds):
        raise EngineRegistryError(
            f"entry point {GROUP}:{point.name} ({point.value}) is not an EngineKind or a "
            "tuple of them")
    return kinds


def discover(points: Iterable[EntryPoint] | None = None) -> dict[str, EngineKind]:
    """The kinds of every engine registered under GROUP, by name, in the order of the
    entry points' names (a package's own kinds in its order). An entry point that does
    not import (its module, or the name in it) is left out with one line on stderr; two
    kinds with one name (from two different entry points) are an error, as is no engine
    at all (loadtower not installed: `make install`)."""
    found: dict[str, EngineKind] = {}
    chosen = entry_points(group=GROUP) if points is None else points
    # one entry point per value: `loadtower` and `loadtower-agent` on one host register
    # the same built-in engines
    unique = {(p.name, p.value): p for p in chosen}.values()
    for point in sorted(unique, key=lambda p: p.name):
        try:
            kinds = _loaded(point)
        except (ImportError, AttributeError) as exc:  # its module, or the name in it
            print(f"loadtower: engine {point.name} ({point.value}) is left out: {exc}",
                  file=sys.stderr)
            continue
        for k in kinds:
            if k.name in found:
                raise EngineRegistryError(
                    f"two engines are named {k.name!r} ({GROUP}:{point.name} and another)")
            found[k.name] = k
    if not found:
        raise EngineRegistryError(
            f"no engine is registered under the entry-point group {GROUP}: loadtower is not "
            "installed here (make install, or pip install -e .)")
    return found


@functools.cache
def _registered() -> dict[str, EngineKind]:
    return discover()


class _Kinds(Mapping[str, EngineKind]):
    """The registered engines' kinds by name, found on first use."""

    def __getitem__(self, name: str) -> EngineKind:
        return _registered()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_registered())

    def __len__(self) -> int:
        return len(_registered())


KINDS: Mapping[str, EngineKind] = _Kinds()


def load_attribute(where: str) -> Any:
    """What a kind names as ``"module:attribute"`` (its ``agent_backend``, a hook, its
    ``sandbox_service``, ``sandbox_ring``), the module imported on first use."""
    module, _, attribute = where.partition(":")
    return getattr(importlib.import_module(module), attribute)


def engine_names() -> tuple[str, ...]:
    """Every registered engine's name, in the registry's order."""
    return tuple(KINDS)


def default_engine() -> str:
    """The engine a scenario, target, direct run or phase spec that names none runs: the
    one registered engine whose kind says ``default``, else the first registered."""
    chosen = [n for n, k in KINDS.items() if k.default]
    if len(chosen) > 1:
        raise EngineRegistryError(f"engines {', '.join(chosen)} all say they are the default")
    return chosen[0] if chosen else next(iter(KINDS))


def path_events() -> tuple[str, ...]:
    """The registered engines' path event kinds (their kinds' ``path_event``)."""
    return tuple(dict.fromkeys(k.path_event for k in KINDS.values() if k.path_event))


def driver_names() -> tuple[str, ...]:
    """Every `driver` a target may name: "auto", then each registered engine's."""
    return tuple(dict.fromkeys(("auto", *(d for k in KINDS.values() for d in k.drivers))))


def dialects() -> tuple[str, ...]:
    """The statement slots of workload files the registered engines run."""
    return tuple(dict.fromkeys(k.dialect for k in KINDS.values()))


def kind(engine: str) -> EngineKind:
    """The engine's kind; KeyError for a name no engine has (the models refuse those)."""
    return KINDS[engine]


def titles(names: list[str]) -> str:
    """The engines' titles joined by `/` (`A/B`), for a message."""
    return "/".join(KINDS[n].title for n in names)


def with_capability(**wanted: object) -> list[str]:
    """The engines whose kind has every given field at the given value."""
    return [n for n, k in KINDS.items() if all(getattr(k, f) == v for f, v in wanted.items())]
