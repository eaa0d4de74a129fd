"""The database engines of the load agent, by the scenario's ``engine`` name.

A backend opens a session (one per process and target) and gives the runner of a
workload file's statements on it (``file_runner``: prepare, send, found); every workload,
the built-in ones too (their shipped files), arrives as a workload file that the
orchestrator rendered for the target (DDL, statements, bindings), so the agent's lanes,
open and closed models and HDR measurement (``agents/driver_loop.py``) are the same for every
engine. An engine's backend is one class with the ``Backend`` interface in its package's
``agent/`` part (``loadtower.engines.NAME.agent``), named by its kind's ``agent_backend``;
its session needs ``ddl``, ``prepare``, ``close`` and what its file runner sends with
(awaitables).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from loadtower.protocol.engine_kinds import engine_names, kind, load_attribute

if TYPE_CHECKING:
    from loadtower.agents.driver_loop import PhaseConfig
    from loadtower.agents.workload.file_ops import FileRunner
    from loadtower.protocol.workload_file_spec import WorkloadFileSpec

PREPARE_TIMEOUT_S = 60.0
PREPARE_RETRY_S = 0.5


async def prepare_retrying(prepare: Callable[[], Awaitable[object]],
                           bound_s: float = PREPARE_TIMEOUT_S,
                           errors: tuple[type[BaseException], ...] = (Exception,)) -> None:
    """Prepare, again every PREPARE_RETRY_S while it fails with `errors`, for `bound_s` in
    all: another worker (worker 0) may still be creating the table."""
    deadline = time.monotonic() + bound_s
    while True:
        try:
            await prepare()
            return
        except errors:
            if time.monotonic() > deadline:  # the table never appeared
                raise
            await asyncio.sleep(PREPARE_RETRY_S)


class Backend(Protocol):
    engine: str
    default_port: int

    def session_key(self, cfg: PhaseConfig) -> tuple: ...
    async def open(self, cfg: PhaseConfig) -> Any: ...
    def load_rows(self, cfg: PhaseConfig) -> int: ...
    def file_runner(self, session: Any, spec: WorkloadFileSpec) -> FileRunner: ...
    def advice(self, exc: BaseException) -> str | None: ...


def engines() -> list[str]:
    return list(engine_names())


def backend_for(engine: str) -> Backend:
    """The agents' backend of `engine`, as its kind names it (``agent_backend``)."""
    try:
        where = kind(engine).agent_backend
    except KeyError:
        raise ValueError(
            f"the load agent has no engine '{engine}' (known: {', '.join(engine_names())})"
        ) from None
    try:
        return load_attribute(where)()
    except ModuleNotFoundError as exc:  # its driver: the agent set's extra of its package
        package = where.split(":")[0].split(".")
        extra = package[2] if package[:2] == ["loadtower", "engines"] else None
        fix = (f"install loadtower-agent[{extra}]" if extra
               else "install its package's requirements")
        raise ValueError(
            f"the load agent cannot drive {kind(engine).title}: {exc.name} is not installed "
            f"here ({fix})"
        ) from None
