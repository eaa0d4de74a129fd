"""Typed scenario and inventory models (validated from TOML by `loadtower.scenarios.loader`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from loadtower.scenarios.durations import parse_duration
from loadtower.scenarios.presets import OPS, PRESETS, SCHEMAS

Duration = Annotated[float, BeforeValidator(parse_duration)]
Engine = Literal["cassandra", "scylla", "clickhouse"]
PositiveInt = Annotated[int, Field(gt=0)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)


# ---------------------------------------------------------------- scenario
class Target(Strict):
    keyspace: str = "loadtower"
    table: str | None = None
    replication_factor: PositiveInt = 1
    consistency: Literal[
        "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE", "ANY"
    ] = "LOCAL_QUORUM"
    driver: Literal["auto", "acsylla", "cassandra-driver", "clickhouse-connect"] = "auto"
    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)


class Dataset(Strict):
    records: PositiveInt = 10_000
    fields: PositiveInt = 10
    field_size: PositiveInt = 100


class Workload(Strict):
    preset: Literal[tuple(PRESETS)] = "custom"  # type: ignore[valid-type]
    mix: dict[Literal[OPS], Annotated[float, Field(ge=0)]] = Field(default_factory=dict)  # type: ignore[valid-type]
    distribution: Literal["uniform", "zipfian", "latest", "hotspot"] | None = None
    schema_: Literal["ycsb", "recipes", "ttl"] | None = Field(default=None, alias="schema")
    batch_size: PositiveInt = 100
    scan_length: PositiveInt = 100
    ttl: Duration | None = None
    hotspot_data_fraction: Annotated[float, Field(gt=0, lt=1)] = 0.2
    hotspot_op_fraction: Annotated[float, Field(gt=0, lt=1)] = 0.8

    @model_validator(mode="after")
    def _resolve_preset(self) -> Workload:
        preset_mix, preset_dist = PRESETS[self.preset]
        mix = dict(self.mix) or dict(preset_mix)
        if not mix or sum(mix.values()) <= 0:
            raise ValueError("a workload needs a mix with at least one positive weight")
        object.__setattr__(self, "mix", mix)
        if self.distribution is None:
            object.__setattr__(self, "distribution", preset_dist)
        if self.schema_ is None:
            object.__setattr__(self, "schema_", SCHEMAS[self.preset])
        if self.schema_ == "ttl" and self.ttl is None:
            object.__setattr__(self, "ttl", 60.0)
        return self

    @property
    def schema_name(self) -> str:
        return str(self.schema_)


class _Phase(Strict):
    name: str | None = None


class _Loaded(_Phase):
    workload: str | None = None


class LoadPhase(_Loaded):
    type: Literal["load"]
    concurrency: PositiveInt = 64
    records: PositiveInt | None = None


class _Driven(_Loaded):
    rate: Annotated[float, Field(gt=0)] | None = None
    users: PositiveInt | None = None
    think_time: Duration = 0.0


class RunPhase(_Driven):
    type: Literal["run"]
    duration: Duration

    @model_validator(mode="after")
    def _one_model(self) -> RunPhase:
        if self.rate is not None and self.users is not None:
            raise ValueError("give either 'rate' (open model) or 'users' (closed model), not both")
        if self.rate is None and self.users is None:
            raise ValueError("give 'rate' (open model) or 'users' (closed model)")
        return self


class RampPhase(_Loaded):
    type: Literal["ramp"]
    rates: list[Annotated[float, Field(gt=0)]] | None = None
    users: list[PositiveInt] | None = None
    step_duration: Duration = 20.0
    target_p99_ms: Annotated[float, Field(gt=0)]
    max_error_rate: Annotated[float, Field(ge=0, le=1)] = 0.01

    @model_validator(mode="after")
    def _steps(self) -> RampPhase:
        if (self.rates is None) == (self.users is None):
            raise ValueError("give exactly one of 'rates' (open model) or 'users' (closed model)")
        if not (self.rates or self.users):
            raise ValueError("a ramp needs at least one step")
        return self


class ScaleOutPhase(_Driven):
    type: Literal["scale_out"]
    host: str
    timeout: Duration = 300.0


class CompactionPhase(_Driven):
    type: Literal["compaction"]
    hosts: list[str] | None = None
    timeout: Duration = 600.0


class PausePhase(_Phase):
    type: Literal["pause"]
    duration: Duration


class FaultPhase(_Driven):
    type: Literal["fault"]
    host: str
    action: str
    after: Duration = 0.0
    duration: Duration = 30.0


Phase = Annotated[
    LoadPhase | RunPhase | RampPhase | ScaleOutPhase | CompactionPhase | PausePhase | FaultPhase,
    Field(discriminator="type"),
]
PHASE_TYPES = ("load", "run", "ramp", "scale_out", "compaction", "pause", "fault")


class Scenario(Strict):
    name: str
    description: str = ""
    engine: Engine = "cassandra"
    target: Target = Field(default_factory=Target)
    dataset: Dataset = Field(default_factory=Dataset)
    workloads: dict[str, Workload] = Field(
        default_factory=lambda: {"main": Workload(preset="ycsb-a")}
    )
    phases: Annotated[list[Phase], Field(min_length=1)]

    def phase_label(self, index: int) -> str:
        phase = self.phases[index]
        return phase.name or f"{index + 1}-{phase.type}"


# ---------------------------------------------------------------- inventory
Role = Literal["db", "agent", "metrics"]
ACTIONS = ("start", "stop", "kill", "pause", "resume", "restart", "flush", "compact", "status")


class SshDefaults(Strict):
    user: str | None = None
    port: Annotated[int, Field(gt=0, lt=65536)] = 22
    key: str | None = None
    known_hosts: str | None = None
    accept_new_host_keys: bool = False
    connect_timeout: Duration = 10.0


class Metrics(Strict):
    prometheus_url: str | None = None
    interval: Duration = 1.0


class Credentials(Strict):
    port: Annotated[int, Field(gt=0, lt=65536)] | None = None
    username: str | None = None
    password: str | None = None
    password_env: str | None = None
    password_file: str | None = None
    database: str | None = None
    secure: bool = False


class Host(Strict):
    address: str
    ssh_host: str | None = None
    ssh_port: Annotated[int, Field(gt=0, lt=65536)] | None = None
    ssh_user: str | None = None
    ssh_key: str | None = None
    roles: Annotated[list[Role], Field(min_length=1)]
    engine: Engine | None = None
    node_exporter: str | None = None
    standby: bool = False
    python: str = "python3"
    processes: Annotated[int, Field(ge=0)] = 0
    actions: dict[Literal[ACTIONS], str] = Field(default_factory=dict)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _db_has_engine(self) -> Host:
        if "db" in self.roles and self.engine is None:
            raise ValueError("a host with role 'db' needs 'engine'")
        return self


class Inventory(Strict):
    ssh: SshDefaults = Field(default_factory=SshDefaults)
    metrics: Metrics = Field(default_factory=Metrics)
    cassandra: Credentials = Field(default_factory=Credentials)
    scylla: Credentials = Field(default_factory=Credentials)
    clickhouse: Credentials = Field(default_factory=Credentials)
    hosts: Annotated[dict[str, Host], Field(min_length=1)]

    def with_role(self, role: str, include_standby: bool = False) -> dict[str, Host]:
        return {
            n: h
            for n, h in self.hosts.items()
            if role in h.roles and (include_standby or not h.standby)
        }

    def credentials(self, engine: str) -> Credentials:
        return getattr(self, engine)


def model_fields_of(model: type[BaseModel]) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


def as_plain(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True)
