"""Typed scenario and inventory models (validated from TOML by `loadtower.scenarios.loader`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_type_hints

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from loadtower.protocol.engine_kinds import (
    KINDS,
    EngineKind,
    default_engine,
    driver_names,
    engine_names,
    kind,
    load_attribute,
)
from loadtower.scenarios.checked_types import Name, Replicas, Strict, TargetKeys
from loadtower.scenarios.checked_types import checked as _checked
from loadtower.scenarios.durations import parse_duration
from loadtower.scenarios.identifiers import address_problem, host_name_problem
from loadtower.scenarios.presets import OPS, PRESETS, SCHEMAS
from loadtower.scenarios.serve_address import serve_address_problem

Duration = Annotated[float, BeforeValidator(parse_duration)]


def _one_of(value: str, known: tuple[str, ...]) -> str:
    """`value` if it is one of `known`; else refused as a literal is, so the loader's line
    says what was expected."""
    if value not in known:
        names = [repr(n) for n in known]
        expected = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        raise PydanticCustomError("literal_error", "Input should be {expected}",
                                  {"expected": expected})
    return value


def _registered_engine(value: str) -> str:
    """An engine name the registry knows (protocol/engine_kinds.py)."""
    return _one_of(value, engine_names())


def _known_driver(value: str) -> str:
    """"auto" or a session driver a registered engine declares (its kind's ``drivers``)."""
    return _one_of(value, driver_names())


# the `engine` of a target or a host: one of the registered engines (their kinds)
Engine = Annotated[str, AfterValidator(_registered_engine)]
Driver = Annotated[str, AfterValidator(_known_driver)]
PositiveInt = Annotated[int, Field(gt=0)]

# the ranges of numbers (docs/formats.md, "Input files, names and ranges"); every float
# is finite (no inf, no nan: allow_inf_nan=False below)
MAX_RECORDS = 10**12
MAX_RATE = 10_000_000.0  # ops/s, of one phase (all agents together)
MAX_USERS = 1_000_000
MAX_CONCURRENCY = 100_000
MAX_FIELDS = 1_000
MAX_FIELD_SIZE = 1 << 20
MAX_BATCH = 10_000
MAX_SCAN = 100_000
MAX_WEIGHT = 1e9
MAX_P99_MS = 3_600_000.0
MAX_PROCESSES = 1_024
MAX_PHASES = 1_000
MAX_STEPS = 1_000


HostName = Annotated[str, _checked(host_name_problem)]
Address = Annotated[str, _checked(address_problem)]
Records = Annotated[int, Field(gt=0, le=MAX_RECORDS)]
Rate = Annotated[float, Field(gt=0, le=MAX_RATE)]
Users = Annotated[int, Field(gt=0, le=MAX_USERS)]
# native_io values of older releases: what each ran on (issue 18 removed both senders)
REMOVED_NATIVE_IO = {"wire": "loadtower's own v4 wire client",
                     "driver": "the C++ driver's sender through ctypes"}
Weight = Annotated[float, Field(ge=0, le=MAX_WEIGHT)]


# ---------------------------------------------------------------- scenario
class TargetBase(Strict):
    """A target's keys that every engine takes; `Target` adds the keys only one engine
    takes, each engine's from its kind's ``target_keys`` model."""

    keyspace: Name = "loadtower"
    table: Name | None = None
    replication_factor: Replicas = 1
    driver: Driver = "auto"
    # how open-model run phases reach the nodes: the engine's native load core ("rust",
    # when its kind names one, it is installed and the ops are ones it binds), else Python
    # lanes over the session `driver` ("python", the reference path); docs/agent-protocol.md
    native_io: Literal["rust", "python"] = "rust"
    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)

    @field_validator("native_io", mode="before")
    @classmethod
    def _removed_native_io(cls, value: Any) -> Any:
        if value in REMOVED_NATIVE_IO:
            raise ValueError(
                f"native_io {value!r} was removed ({REMOVED_NATIVE_IO[value]} is gone): use "
                "'rust' (the default: the Rust load core) or 'python' (Python lanes over the "
                "session driver)"
            )
        return value


def target_key_models(kinds: Iterable[EngineKind] | None = None) -> dict[str, type[BaseModel]]:
    """Each kind's ``target_keys`` model once, by the name of the first kind that names it
    (two kinds of one family may name one model)."""
    models: dict[str, type[BaseModel]] = {}
    for k in KINDS.values() if kinds is None else kinds:
        model = load_attribute(k.target_keys) if k.target_keys is not None else None
        if model is not None and model not in models.values():
            models[k.name] = model
    return models


def engine_target_fields(kinds: Iterable[EngineKind] | None = None) -> dict[str, Any]:
    """The keys only one engine takes, from each kind's ``target_keys`` model (its name,
    type and default), for `Target`; two models may not declare one key, nor one of
    `TargetBase`'s."""
    fields: dict[str, Any] = {}
    for engine, model in target_key_models(kinds).items():
        hints = get_type_hints(model, include_extras=True)
        for name, info in model.model_fields.items():
            if name in fields or name in TargetBase.model_fields:
                raise ValueError(f"engine {engine}'s target key {name!r} is another's too")
            fields[name] = (hints[name], Field(default=info.default)
                            if info.default_factory is None
                            else Field(default_factory=info.default_factory))
    return fields


def engine_rules(models: Iterable[type[BaseModel]]) -> Any:
    """`Target`'s validator asking each `TargetKeys` model what is wrong with its keys
    beside the shared ones (its ``target_problem``; one line for the loader)."""
    rules = [m.target_problem for m in models if issubclass(m, TargetKeys)]

    def check(target: TargetBase) -> TargetBase:
        for rule in rules:
            problem = rule(target)
            if problem:
                raise ValueError(problem)
        return target

    return model_validator(mode="after")(check)


if TYPE_CHECKING:
    Target = TargetBase
else:  # the shared keys, then each registered engine's own, in the registry's order
    Target = create_model("Target", __base__=TargetBase, __module__=__name__,
                          __validators__={"_engine_rules": engine_rules(
                              target_key_models().values())},
                          **engine_target_fields())


class NamedTarget(Target):
    """One of a scenario's ``[targets.NAME]``: an engine, its hosts and its target keys."""

    engine: Engine
    hosts: Annotated[list[str], Field(min_length=1)] | None = None


class Dataset(Strict):
    records: Records = 10_000
    fields: Annotated[int, Field(gt=0, le=MAX_FIELDS)] = 10
    field_size: Annotated[int, Field(gt=0, le=MAX_FIELD_SIZE)] = 100


class Workload(Strict):
    preset: Literal[tuple(PRESETS)] = "custom"  # type: ignore[valid-type]
    mix: dict[Literal[OPS], Weight] = Field(default_factory=dict)  # type: ignore[valid-type]
    distribution: Literal["uniform", "zipfian", "latest", "hotspot"] | None = None
    schema_: Literal["ycsb", "recipes", "ttl"] | None = Field(default=None, alias="schema")
    table: Name | None = None  # this workload's table, instead of [target].table
    batch_size: Annotated[int, Field(gt=0, le=MAX_BATCH)] = 100
    scan_length: Annotated[int, Field(gt=0, le=MAX_SCAN)] = 100
    ttl: Duration | None = None
    # the table's bloom_filter_fp_chance, where the engine's tables have one (an existing
    # table is ALTERed to it); None: the table keeps its own (a new one: the engine's
    # default, 0.01 for the ttl schema)
    bloom_filter_fp_chance: Annotated[float, Field(gt=0, le=1)] | None = None
    hotspot_data_fraction: Annotated[float, Field(gt=0, lt=1)] = 0.2
    hotspot_op_fraction: Annotated[float, Field(gt=0, lt=1)] = 0.8
    # a workload file (docs/workloads.md), relative to the scenario, or a built-in one's
    # name (ycsb, recipes, ttl); its ops replace preset/mix/schema
    file: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    vars: dict[Name, str | int | float | bool] = Field(default_factory=dict)  # the file's [vars]
    weights: dict[Name, Weight] = Field(default_factory=dict)  # the file's ops' weights

    @model_validator(mode="after")
    def _resolve_preset(self) -> Workload:
        if self.file is not None:
            for key in FILE_REPLACES:
                if key in self.model_fields_set:
                    raise ValueError(f"a workload with 'file' takes its ops from the file: "
                                     f"remove '{key.rstrip('_')}' (op weights: 'weights')")
            if self.bloom_filter_fp_chance is not None:
                raise ValueError("a workload file sets its tables' options: remove "
                                 "'bloom_filter_fp_chance' and set the file's variable "
                                 "(the built-in ttl file: vars = {bloom_filter_fp_chance = 0.1})")
            return self
        for key in ("vars", "weights"):
            if key in self.model_fields_set:
                raise ValueError(f"'{key}' is for a workload file: add file = \"...\"")
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


FILE_REPLACES = ("preset", "mix", "schema_")


class _Phase(Strict):
    name: str | None = None


class _Loaded(_Phase):
    workload: str | None = None


class LoadPhase(_Loaded):
    type: Literal["load"]
    concurrency: Annotated[int, Field(gt=0, le=MAX_CONCURRENCY)] = 64
    records: Records | None = None
    start_key: Annotated[int, Field(ge=0, le=MAX_RECORDS)] = 0  # keys start_key .. start_key + records - 1


class _Driven(_Loaded):
    rate: Rate | None = None
    users: Users | None = None
    think_time: Duration = 0.0


class SteadyPhase(_Driven):
    """A `type = "run"` phase: a steady load at a fixed rate (open model) or a fixed
    number of users (closed model) for a duration."""

    type: Literal["run"]
    duration: Duration

    @model_validator(mode="after")
    def _one_model(self) -> SteadyPhase:
        if self.rate is not None and self.users is not None:
            raise ValueError("give either 'rate' (open model) or 'users' (closed model), not both")
        if self.rate is None and self.users is None:
            raise ValueError("give 'rate' (open model) or 'users' (closed model)")
        return self


# a ramp step's first second settles; the next whole seconds are judged (at least one)
MIN_RAMP_STEP_S = 3.0


def _step_long_enough(value: float) -> float:
    if value < MIN_RAMP_STEP_S:
        raise ValueError(
            f"a ramp step must last at least {MIN_RAMP_STEP_S:g}s, got {value:g}s: the "
            "first second after each change of rate is not judged, and only whole "
            "seconds are, so a shorter step would have no second to judge"
        )
    return value


class RampPhase(_Loaded):
    type: Literal["ramp"]
    rates: Annotated[list[Rate], Field(max_length=MAX_STEPS)] | None = None
    users: Annotated[list[Users], Field(max_length=MAX_STEPS)] | None = None
    step_duration: Duration = 20.0
    target_p99_ms: Annotated[float, Field(gt=0, le=MAX_P99_MS)]
    max_error_rate: Annotated[float, Field(ge=0, le=1)] = 0.01

    @field_validator("step_duration")
    @classmethod
    def _judged_seconds(cls, value: float) -> float:
        return _step_long_enough(value)

    @model_validator(mode="after")
    def _steps(self) -> RampPhase:
        if (self.rates is None) == (self.users is None):
            raise ValueError("give exactly one of 'rates' (open model) or 'users' (closed model)")
        if not (self.rates or self.users):
            raise ValueError("a ramp needs at least one step")
        return self


class SearchPhase(_Loaded):
    """The highest rate (open model) that meets the target: steps growing by ``growth``
    from ``start_rate`` until one fails (the bracket), then bisection until the bracket
    is within the resolution, then a confirmation step at the answer
    (orchestrator/search_plan.py)."""

    type: Literal["search"]
    min_rate: Rate
    max_rate: Rate
    start_rate: Rate | None = None  # default: min_rate
    growth: Annotated[float, Field(gt=1, le=100)] = 2.0
    resolution: Rate | None = None  # ops/s; or resolution_pct (default 10 %)
    resolution_pct: Annotated[float, Field(gt=0, le=100)] | None = None
    step_duration: Duration = 20.0
    target_p99_ms: Annotated[float, Field(gt=0, le=MAX_P99_MS)] | None = None
    target_p999_ms: Annotated[float, Field(gt=0, le=MAX_P99_MS)] | None = None
    max_error_rate: Annotated[float, Field(ge=0, le=1)] = 0.01
    min_achieved: Annotated[float, Field(gt=0, le=1)] = 0.95  # of the rate asked
    max_steps: Annotated[int, Field(gt=1, le=MAX_STEPS)] = 20
    confirm: bool = True
    max_confirmations: Annotated[int, Field(ge=1, le=10)] = 2

    @field_validator("step_duration")
    @classmethod
    def _judged_seconds(cls, value: float) -> float:
        return _step_long_enough(value)

    @model_validator(mode="after")
    def _bounds(self) -> SearchPhase:
        if self.target_p99_ms is None and self.target_p999_ms is None:
            raise ValueError("give 'target_p99_ms' and/or 'target_p999_ms'")
        if self.resolution is not None and self.resolution_pct is not None:
            raise ValueError("give either 'resolution' (ops/s) or 'resolution_pct', not both")
        if self.min_rate >= self.max_rate:
            raise ValueError(
                f"min_rate ({self.min_rate:g}) must be below max_rate ({self.max_rate:g})"
            )
        start = self.start_rate
        if start is not None and not self.min_rate <= start <= self.max_rate:
            raise ValueError(
                f"start_rate ({start:g}) must lie within min_rate ({self.min_rate:g}) and "
                f"max_rate ({self.max_rate:g})"
            )
        return self


class ScaleOutPhase(_Driven):
    type: Literal["scale_out"]
    host: str
    timeout: Duration = 300.0


class CompactionPhase(_Driven):
    type: Literal["compaction"]
    hosts: list[str] | None = None
    timeout: Duration = 600.0


class FlushPhase(_Phase):
    """Every database host of the target (or ``hosts``) whose engine flushes
    (``flush_action``) runs its declared ``flush`` action: memtables, and the tombstones in
    them, reach disk."""

    type: Literal["flush"]
    hosts: list[str] | None = None
    timeout: Duration = 300.0


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
    LoadPhase | SteadyPhase | RampPhase | ScaleOutPhase | CompactionPhase | FlushPhase | PausePhase
    | FaultPhase | SearchPhase,
    Field(discriminator="type"),
]
PHASE_TYPES = (
    "load", "run", "ramp", "scale_out", "compaction", "flush", "pause", "fault", "search"
)  # fmt: skip


THRESHOLD_METRICS = ("p50", "p90", "p99", "p999", "max", "error_rate", "ops_per_s")
MAX_THRESHOLDS = 1_000


class Threshold(Strict):
    """One of a scenario's ``[[thresholds]]``: a figure of a phase (every phase with ops
    when ``phase`` is not given) and op (every op merged when not given) that must stay
    at most ``max`` and/or at least ``min`` (latency in ms, error_rate a fraction of the
    ops, ops_per_s the phase's rate); docs/formats.md, "Thresholds"."""

    phase: Annotated[str, Field(min_length=1, max_length=256)] | None = None
    op: Annotated[str, Field(min_length=1, max_length=256)] | None = None
    metric: Literal[THRESHOLD_METRICS]  # type: ignore[valid-type]
    max: Annotated[float, Field(ge=0)] | None = None
    min: Annotated[float, Field(ge=0)] | None = None
    abort: bool = False  # also checked live during the phase: a breach of max stops the run
    abort_after: Duration = 5.0  # the live check starts this long into the phase

    @model_validator(mode="after")
    def _bounds(self) -> Threshold:
        if self.max is None and self.min is None:
            raise ValueError("a threshold needs 'max' or 'min' (or both)")
        if self.max is not None and self.min is not None and self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is above max ({self.max:g})")
        if self.metric == "error_rate" and any(v is not None and v > 1 for v in (self.max,
                                                                                  self.min)):
            raise ValueError("error_rate is a fraction of the ops (0.001 is 0.1%): at most 1")
        if self.abort and self.max is None:
            raise ValueError("abort = true checks 'max' live: a 'min' can only be judged when "
                             "the phase ends")
        if "abort_after" in self.model_fields_set and not self.abort:
            raise ValueError("abort_after is for abort = true")
        return self


class Scenario(Strict):
    """A scenario; with ``[targets.NAME]`` its phases run once per target, in order.

    Each target's keys override ``[target]``'s (which then holds the shared defaults) and
    its ``engine`` defaults to the top-level ``engine``; after validation ``engine`` is
    the engine of the first target that runs. ``run_targets`` picks and orders them.
    """

    name: str
    description: str = ""
    engine: Engine = Field(default_factory=default_engine)
    target: Target = Field(default_factory=Target)
    targets: dict[str, NamedTarget] = Field(default_factory=dict)
    run_targets: list[str] | None = None
    dataset: Dataset = Field(default_factory=Dataset)
    workloads: dict[str, Workload] = Field(
        default_factory=lambda: {"main": Workload(preset="ycsb-a")}
    )
    phases: Annotated[list[Phase], Field(min_length=1, max_length=MAX_PHASES)]
    thresholds: Annotated[list[Threshold], Field(max_length=MAX_THRESHOLDS)] = Field(
        default_factory=list
    )

    @model_validator(mode="before")
    @classmethod
    def _merge_targets(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("targets"), dict):
            return data
        raw = data.get("target")
        base: dict[str, Any] = raw if isinstance(raw, dict) else {}
        engine = data.get("engine") or default_engine()
        merged = {
            name: {**base, "engine": engine, **t} if isinstance(t, dict) else t
            for name, t in data["targets"].items()
        }
        out = {**data, "targets": merged}
        order = data.get("run_targets")
        names = (
            [n for n in order if isinstance(n, str) and n in merged]
            if isinstance(order, list)
            else []
        )
        first = merged[names[0]] if names else None
        first = first or next(iter(merged.values()), None)
        if isinstance(first, dict) and first.get("engine") in KINDS:
            out["engine"] = first["engine"]  # the first target that runs
        return out

    def phase_label(self, index: int) -> str:
        phase = self.phases[index]
        return phase.name or f"{index + 1}-{phase.type}"

    def target_names(self) -> list[str]:
        """The targets that run, in order; [] for a scenario without ``[targets.*]``."""
        return list(self.run_targets if self.run_targets is not None else self.targets)

    def for_target(self, name: str) -> Scenario:
        """This scenario with one target as its only one (``engine`` and ``target`` set)."""
        target = self.targets[name]
        return self.model_copy(
            update={"engine": target.engine, "target": target, "targets": {}, "run_targets": None}
        )


# ---------------------------------------------------------------- inventory
Role = Literal["db", "agent", "metrics"]
# partition / heal: take the host's data link down / up (a real cluster's separate
# management network keeps SSH working, so heal reaches the host; docs/orchestrator.md)
ACTIONS = (
    "start", "stop", "kill", "pause", "resume", "restart", "flush", "compact", "status",
    "partition", "heal",
)  # fmt: skip
# a cgroup v1 path under the controllers' roots (cpu,cpuacct and memory), e.g. loadtower/db1
CGROUP = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}(/[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}){0,7}")
# a Linux network interface name (IFNAMSIZ - 1 characters)
NET_DEVICE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}")


def cgroup_problem(value: str) -> str | None:
    if CGROUP.fullmatch(value) and ".." not in value.split("/"):
        return None
    return (f"invalid cgroup {value!r}: expected a path under the cgroup v1 roots such as "
            "'loadtower/db1' (letters, digits, _ . -, parts joined by /, no leading /)")


def net_device_problem(value: str) -> str | None:
    if NET_DEVICE.fullmatch(value):
        return None
    return (f"invalid net_device {value!r}: expected a network interface name such as "
            "'data0' (letters, digits, _ . -, at most 15)")


class SshDefaults(Strict):
    user: str | None = None
    port: Annotated[int, Field(gt=0, lt=65536)] = 22
    key: str | None = None
    known_hosts: str | None = None
    accept_new_host_keys: bool = False
    connect_timeout: Duration = 10.0
    agent_grace: Annotated[Duration, Field(gt=0)] = 30.0  # agents alone longer stop their load

    def known_hosts_file(self) -> Path:
        """The known_hosts file the host keys are checked against: the configured one,
        else ~/.ssh/known_hosts (the SSH pool's and `check`'s)."""
        return Path(self.known_hosts).expanduser() if self.known_hosts \
            else Path.home() / ".ssh" / "known_hosts"


class Metrics(Strict):
    prometheus_url: str | None = None
    interval: Duration = 1.0
    # where `loadtower run` serves its live figures for Prometheus ([HOST:]PORT;
    # docs/prometheus.md); None: not served unless --metrics-address says so
    serve: Annotated[str, _checked(serve_address_problem)] | None = None


class Credentials(Strict):
    port: Annotated[int, Field(gt=0, lt=65536)] | None = None
    username: str | None = None
    password: str | None = None
    password_env: str | None = None
    password_file: str | None = None
    database: Name | None = None
    secure: bool = False
    # engines with TLS files (their kind's ``tls_files``): TLS to the nodes (PEM files;
    # client cert and key when the nodes require client certificates); docs/formats.md
    tls: bool = False
    tls_ca_file: str | None = None
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    tls_verify_hostname: bool = True

    @model_validator(mode="after")
    def _tls_keys(self) -> Credentials:
        files = [k for k in TLS_FILE_KEYS if getattr(self, k) is not None]
        if files and not self.tls:
            raise ValueError(f"{files[0]} is set but tls is not: add tls = true")
        if self.tls and self.tls_ca_file is None:
            raise ValueError("tls = true needs tls_ca_file (the PEM file of the CA that "
                             "signed the nodes' certificates)")
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            given = "tls_cert_file" if self.tls_cert_file else "tls_key_file"
            missing = "tls_key_file" if self.tls_cert_file else "tls_cert_file"
            raise ValueError(f"{given} needs {missing} too (the client certificate's key)")
        return self


TLS_FILE_KEYS = ("tls_ca_file", "tls_cert_file", "tls_key_file")


class Host(Strict):
    address: Address
    ssh_host: Address | None = None
    ssh_port: Annotated[int, Field(gt=0, lt=65536)] | None = None
    ssh_user: str | None = None
    ssh_key: str | None = None
    roles: Annotated[list[Role], Field(min_length=1)]
    engine: Engine | None = None
    port: Annotated[int, Field(gt=0, lt=65536)] | None = None  # the database's, if not [engine]'s
    node_exporter: str | None = None
    standby: bool = False
    python: str = "python3"
    bootstrap: bool = False
    bootstrap_dir: str = "~/.loadtower"
    processes: Annotated[int, Field(ge=0, le=MAX_PROCESSES)] = 0
    # an agent host's worker processes send one interval line per second for the host,
    # merged by worker 0 (agents/host_lines.py): a K-th of the lines through the SSH
    # forwards, the master and the orchestrator; false: one line per worker and second
    merge_workers: bool = True
    # node metrics over SSH (/proc path): this cgroup's CPU and memory instead of the
    # machine's, and only this interface's network counters (docs/orchestrator.md)
    cgroup: Annotated[str, _checked(cgroup_problem)] | None = None
    net_device: Annotated[str, _checked(net_device_problem)] | None = None
    actions: dict[Literal[ACTIONS], str] = Field(default_factory=dict)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _db_has_engine(self) -> Host:
        if "db" in self.roles and self.engine is None:
            raise ValueError("a host with role 'db' needs 'engine'")
        return self


class InventoryBase(Strict):
    """An inventory without its engines' sections; `Inventory` adds one `[ENGINE]`
    section (`Credentials`) per registered engine."""

    ssh: SshDefaults = Field(default_factory=SshDefaults)
    metrics: Metrics = Field(default_factory=Metrics)
    hosts: Annotated[dict[HostName, Host], Field(min_length=1)]

    def with_role(self, role: str, include_standby: bool = False) -> dict[str, Host]:
        return {
            n: h
            for n, h in self.hosts.items()
            if role in h.roles and (include_standby or not h.standby)
        }

    @model_validator(mode="after")
    def _tls_only_where_it_has_files(self) -> InventoryBase:
        for name in engine_names():
            if not kind(name).tls_files and self.credentials(name).tls:
                raise ValueError(f"[{name}] has no tls keys: use secure = true")
        return self

    def credentials(self, engine: str) -> Credentials:
        """The `[ENGINE]` section (an engine's credentials, port and TLS)."""
        return getattr(self, engine)

    def db_port(self, host: str, engine: str) -> int:
        """A DB host's port: its own ``port``, else ``[engine].port``, else the default."""
        return self.hosts[host].port or self.credentials(engine).port or kind(engine).default_port


if TYPE_CHECKING:
    Inventory = InventoryBase
else:  # one `[ENGINE]` section per registered engine, in the registry's order
    Inventory = create_model(
        "Inventory",
        __base__=InventoryBase,
        **{name: (Credentials, Field(default_factory=Credentials)) for name in engine_names()},
    )


def model_fields_of(model: type[BaseModel]) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


def as_plain(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True)
