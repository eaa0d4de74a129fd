"""The agent line protocol (docs/agent-protocol.md): one JSON object per line, from the
agents through the Locust master to the orchestrator.

Every line has a ``type``: ``interval`` (one agent's ops of one phase completed in one
wall-clock second), ``event`` (warnings, errors, worker changes, a phase's ``drain``),
the summary (last line of ``loadtower agent run``), the agents' own ``hello``,
``configured``, ``load_done``, ``stop_done``, and the master's acks (commands.py).
"""

# no `from __future__ import annotations`: TypedDict needs the real NotRequired
# at run time for __required_keys__ (checked by tests/protocol)
from typing import Any, Literal, NotRequired, TypedDict


class OpSample(TypedDict):
    """One op type's second: count, error classes, late starts, HDR histograms (base64
    of the V2 encoding, hdr_format.py) of service and response time in microseconds, and
    of lateness (send - intended start of the open model's sent ops; absent when none
    was sent in it, or from an agent older than the field)."""

    ops: int
    errors: dict[str, int]
    late: int
    service_hist: str
    response_hist: str
    lateness_hist: NotRequired[str]
    # with lateness_hist: its highest non-empty bucket's highest equivalent value (us),
    # what hdrh's get_max_value() gives; absent from agents older than the field
    lateness_max_us: NotRequired[int]


class IntervalLine(TypedDict):
    type: Literal["interval"]
    agent: str
    host: str
    ts: int  # the wall-clock second the ops completed in
    phase: str  # the phase they were scheduled in
    cpu_pct: float
    cpu_s: float
    span: list[float] | None  # earliest intended start, latest completion (wall clock)
    ops: dict[str, OpSample]
    seq: NotRequired[int]  # the spool's line number, set by the agent's spool


class DrainData(TypedDict):
    phase: str
    waited_ops: int
    drain_s: float
    abandoned: int


class EventLine(TypedDict):
    type: Literal["event"]
    kind: str  # warning, error, drain, worker_joined, worker_left, agent_orphaned, ...
    ts: float
    message: str
    agent: NotRequired[str]
    host: NotRequired[str]
    phase: NotRequired[str]
    worker: NotRequired[str]
    data: NotRequired[DrainData | dict[str, Any]]


class SummaryFigures(TypedDict):
    ops: int
    errors: int
    p50_ms: float  # response time, merged over every agent and second
    p99_ms: float
    max_ms: float
    cpu_s: float  # the agents' CPU over the run


class SummaryLine(TypedDict):
    """The last line of ``loadtower agent run``."""

    summary: SummaryFigures


class HelloLine(TypedDict):
    """A worker's first line to the master."""

    type: Literal["hello"]
    agent: str
    pid: int
    protocol: NotRequired[int]  # missing: version 1


class StopDoneLine(TypedDict):
    type: Literal["stop_done"]
    id: int | None
    ts: float
