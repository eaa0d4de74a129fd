"""The run's live figures served over HTTP for Prometheus while `loadtower run` runs.

prometheus_client's WSGI server (``start_http_server``: a thread of its own, one
thread per request) serves a registry of its own holding only the ``LiveCollector``.
A scrape reads the run's state on the run's event loop (``on_loop``), the one thread
that changes it, so every figure comes from one consistent moment; a loop that does
not answer within ``SNAPSHOT_TIMEOUT_S`` gives an empty page rather than a half-read
one. ``close()`` stops the server, closes its socket and joins its thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from prometheus_client import start_http_server
from prometheus_client.registry import CollectorRegistry

from loadtower.errors import LoadtowerError
from loadtower.orchestrator.metrics_collector import LiveCollector
from loadtower.orchestrator.metrics_snapshot import MetricsSnapshot, take_snapshot
from loadtower.scenarios.serve_address import ServeAddress, url_of

if TYPE_CHECKING:
    from loadtower.orchestrator.sinks import Sinks

SNAPSHOT_TIMEOUT_S = 2.0
JOIN_TIMEOUT_S = 10.0
T = TypeVar("T")


class MetricsEndpoint:
    """Serves `source()`'s snapshots on `address` from the moment it is made (the port
    is bound here: ServeError, one line naming the address, when it cannot be)."""

    def __init__(self, address: ServeAddress,
                 source: Callable[[], MetricsSnapshot | None]) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(LiveCollector(source))
        try:
            self.server, self.thread = start_http_server(
                address.port, address.host, registry=self.registry)
        except OSError as exc:
            raise ServeError(bind_problem(address, exc)) from None
        self.host = address.host
        self.closed = False

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return url_of(self.host, self.port)

    def close(self) -> None:
        """Stop serving: the port is free and the server's thread gone on return."""
        if self.closed:
            return
        self.closed = True
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(JOIN_TIMEOUT_S)


def serve_run(address: ServeAddress, sinks: Callable[[], Sinks | None],
              loop: asyncio.AbstractEventLoop) -> MetricsEndpoint:
    """An endpoint over the run's `sinks()` (None before the run has them), read on
    `loop`, the run's event loop."""

    failed: list[str] = []

    def snapshot() -> MetricsSnapshot | None:
        current = sinks()
        if current is None:
            return None
        try:
            return take_snapshot(current, time.time())
        except Exception as exc:  # noqa: BLE001 - the run goes on; said once, not per scrape
            if not failed:
                failed.append(f"{type(exc).__name__}: {exc}")
                current.event("warning", f"metrics endpoint: no figures ({failed[0]})")
            return None

    return MetricsEndpoint(address, lambda: on_loop(loop, snapshot))


def on_loop(loop: asyncio.AbstractEventLoop, read: Callable[[], T | None],
            timeout: float = SNAPSHOT_TIMEOUT_S) -> T | None:
    """`read()` called on `loop` (from another thread); None when the loop is closed or
    does not run it within `timeout`."""
    future: concurrent.futures.Future[T | None] = concurrent.futures.Future()

    def call() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(read())
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            future.set_exception(exc)

    try:
        loop.call_soon_threadsafe(call)
        return future.result(timeout)
    except (RuntimeError, concurrent.futures.TimeoutError):  # loop closed, or busy
        future.cancel()
        return None


class ServeError(LoadtowerError):
    """The address cannot be served: `problem` says why; the message adds what to do."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"{problem}; or run with --no-metrics")
        self.problem = problem


def bind_problem(address: ServeAddress, exc: OSError) -> str:
    """One line saying why the metrics address cannot be served."""
    where = f"cannot serve metrics on {address.host}:{address.port} ({address.source})"
    if isinstance(exc, socket.gaierror):
        why = f"unknown host {address.host!r}"
    elif exc.errno == errno.EADDRINUSE:
        why = "the port is in use (another run or program); choose another port"
    elif exc.errno == errno.EADDRNOTAVAIL:
        why = f"no interface of this machine has the address {address.host}"
    elif exc.errno == errno.EACCES:
        why = "permission denied (a port below 1024 needs root)"
    else:
        why = exc.strerror or str(exc)
    return f"{where}: {why}"
