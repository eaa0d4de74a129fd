"""The phase spec: what a load agent needs to generate one phase's load.

The orchestrator builds it from the scenario (orchestrator/context.py
``spec()``, ``targets.connection()``); the Locust master wraps it in each worker's
`PhaseMessage`; the agents read it only through these types.
"""

# no `from __future__ import annotations`: TypedDict needs the real NotRequired
# at run time for __required_keys__ (checked by tests/protocol)
from typing import Literal, TypedDict

from loadtower.protocol.workload_file_spec import WorkloadFileSpec


class TargetSpec(TypedDict, total=False):
    """The keys of the scenario's target (`Target`) that every engine takes. The spec
    carries its engine's own keys too (a kind's ``target_keys``): an engine's agent part
    types those it reads in a TypedDict of its own over this one
    (``engines/NAME/agent/target_spec.py``)."""

    keyspace: str
    table: str | None
    replication_factor: int
    driver: str
    native_io: Literal["rust", "python"]
    settings: dict[str, str | int | float | bool]
    engine: str
    hosts: list[str] | None


class DatasetSpec(TypedDict):
    records: int
    fields: int
    field_size: int


class WorkloadSpec(TypedDict, total=False):
    preset: str
    mix: dict[str, float]
    distribution: str | None
    schema: str | None  # the scenario file's name (the orchestrator dumps by alias)
    schema_: str | None  # the model's field name (`loadtower agent run`)
    table: str | None
    batch_size: int
    scan_length: int
    ttl: float | None
    bloom_filter_fp_chance: float | None  # a table option (None: the table's own)
    hotspot_data_fraction: float
    hotspot_op_fraction: float
    file: str | None  # a workload file (docs/workloads.md): then workload_file holds it
    vars: dict[str, str | int | float | bool]
    weights: dict[str, float]


class TlsSpec(TypedDict, total=False):
    """TLS to the nodes: PEM contents (a load host cannot read the orchestrator's files)."""

    ca_pem: str  # the CA that signed the nodes' certificates
    cert_pem: str | None  # the client certificate, when the nodes require one
    key_pem: str | None  # its private key (written by the agent to a 0600 temp file)
    # on the link: the name of the 0600 file in the run's private directory on the agent
    # host that holds key_pem (protocol/link_secrets.py); key_pem itself never crosses it
    key_ref: str | None
    verify_hostname: bool  # the node's certificate must name its address
    ca_file: str  # the CA's path on the orchestrator, named in handshake errors


class ConnectionOptions(TypedDict, total=False):
    secure: bool  # the inventory's [ENGINE] secure: an encrypted transport (e.g. HTTPS)
    tls: TlsSpec  # TLS to every node (a kind with tls_files)
    names: dict[str, str]  # node address -> inventory host name (for error lines)


class PhaseSpec(TypedDict, total=False):
    engine: str
    target: TargetSpec
    dataset: DatasetSpec
    workload: WorkloadSpec
    workload_name: str
    connection: ConnectionOptions
    start_key: int
    # a workload file's workload (docs/workloads.md), rendered for the phase's target
    workload_file: WorkloadFileSpec


class PhaseMessage(TypedDict):
    """The master's ``lt_phase`` message to one worker (the fields of the agents'
    ``PhaseConfig``) plus the protocol version."""

    protocol: int
    phase: str
    mode: Literal["load", "run"]
    spec: PhaseSpec
    contact_points: list[str]
    port: int | None
    username: str | None
    # the name of the 0600 file holding the password in the run's private directory on
    # the agent host (protocol/link_secrets.py): the password never crosses the link
    password_ref: str | None
    driver: str
    worker_index: int
    worker_count: int
    lane_rate: float | None
    think_time: float
    records: int
    max_in_flight: int
    seed: int | None


class RateMessage(TypedDict):
    """The master's ``lt_rate`` message: the running phase's new open-model rate per lane
    (a user), for every worker (a worker on another phase ignores it)."""

    phase: str
    lane_rate: float
