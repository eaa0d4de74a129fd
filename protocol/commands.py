"""The Locust master's commands (orchestrator -> master, one JSON object a line on its
stdin) and its acks (master -> orchestrator, on its stdout beside the agents' lines)."""

# no `from __future__ import annotations`: TypedDict needs the real NotRequired
# at run time for __required_keys__ (checked by tests/protocol)
from typing import Literal, NotRequired, TypedDict

from loadtower.protocol.phase_spec import PhaseSpec


class StartCommand(TypedDict):
    """Start a phase on every connected worker."""

    cmd: Literal["start"]
    protocol: NotRequired[int]  # missing: version 1
    phase: str
    spec: PhaseSpec
    mode: Literal["load", "run"]
    rate: float | None  # open model: total ops/s
    users: int | None  # closed model
    think_time: NotRequired[float | None]
    duration: NotRequired[float | None]
    records: int | None
    concurrency: NotRequired[int | None]  # load phases: concurrent inserts
    contact_points: list[str]
    port: NotRequired[int | None]
    username: NotRequired[str | None]
    database: NotRequired[str | None]
    # the name of the file holding the password on every agent host (never the password:
    # protocol/link_secrets.py); None: no password
    password_ref: NotRequired[str | None]
    driver: NotRequired[str]
    max_in_flight: NotRequired[int]
    seed: NotRequired[int | None]


class StopCommand(TypedDict):
    """Stop the phase's load. With `drain_s` (an operator's stop: Ctrl-C, the TUI's stop)
    the agents wait at most that long for their ops in flight (else their own bound)."""

    cmd: Literal["stop"]
    drain_s: NotRequired[float]


class DropCommand(TypedDict):
    """Agents the orchestrator found gone: their users are re-split over the others."""

    cmd: Literal["drop"]
    agents: list[str]


class RateCommand(TypedDict):
    """Steer the running open-model phase: its new total rate (ops/s), split over the
    phase's users as before (`lt_rate` to every worker)."""

    cmd: Literal["rate"]
    rate: float


class UsersCommand(TypedDict):
    """Steer the running closed-model phase: its new number of users (Locust spawns or
    stops users; each is one lane)."""

    cmd: Literal["users"]
    users: int


class QuitCommand(TypedDict):
    cmd: Literal["quit"]


MasterCommand = (StartCommand | StopCommand | DropCommand | RateCommand | UsersCommand
                 | QuitCommand)


class StartedAck(TypedDict):
    type: Literal["started"]
    ts: float
    users: int


class FailedAck(TypedDict):
    type: Literal["failed"]
    ts: float
    message: str


class StoppedAck(TypedDict):
    type: Literal["stopped"]
    ts: float


class PhaseDoneAck(TypedDict):
    """A load phase inserted everything."""

    type: Literal["phase_done"]
    ts: float


MasterAck = StartedAck | FailedAck | StoppedAck | PhaseDoneAck
