"""The Rust core's connect errors as the agent says them: a failed TLS handshake is the
line the agent's own probe writes (agents/tls.py), with the node's inventory name and
the CA file; any other connect error is left as the core said it."""

from __future__ import annotations

from loadtower.engines.cassandra.agent.rust_feed import (
    core_module,
    file_statements,
    handshake_line,
    why_not_file,
)

CORE = ("198.18.0.11:9042: TLS handshake failed: certificate verify failed: unable to get "
        "local issuer certificate")
CONNECTION = {"names": {"198.18.0.11": "db1"}, "tls": {"ca_file": "/x/ca.pem", "ca_pem": "..."}}


def test_a_handshake_failure_names_the_node_and_the_ca() -> None:
    assert handshake_line(CORE, CONNECTION) == f"db1 {CORE} (CA /x/ca.pem)"


def test_without_names_or_ca_file_the_address_stays() -> None:
    assert handshake_line(CORE, {"tls": {"ca_pem": "..."}}) == CORE
    same = {"names": {"198.18.0.11": "198.18.0.11"}}
    assert handshake_line(CORE, same) == CORE


def test_other_connect_errors_are_not_handshake_lines() -> None:
    driver = ("connecting to 198.18.0.11:9042: Failed to perform initial cluster metadata "
              "fetch: ... Authentication failed - bad credentials")
    assert handshake_line(driver, CONNECTION) is None
    # a driver error that happens to contain the words is no handshake line either
    mixed = "connecting to 198.18.0.11:9042: x: TLS handshake failed: y"
    assert handshake_line(mixed, CONNECTION) is None


def _file_spec(gen: dict) -> dict:
    return {"ops": {"get": {"key": {"gen": "uniform"}, "bind": {"id": gen},
                            "types": {"id": "text"}}},
            "run": {"get": {"statements": [{"text": "SELECT * FROM t WHERE id = ?",
                                            "binds": ["id"], "insert_rows": False}],
                            "weight": 1.0, "expect": "rows"},
                    "rmw": {"steps": ["get", "get"], "weight": 0.0}}}


def test_a_workload_file_names_its_statements_and_why_not() -> None:
    spec = _file_spec({"gen": "key", "prefix": "u"})
    assert file_statements(spec) == {"get/0": "SELECT * FROM t WHERE id = ?"}
    assert why_not_file(None, "clickhouse", spec) == (
        "the Rust core drives Cassandra/ScyllaDB only, not clickhouse")
    if core_module() is None:
        assert "not installed" in str(why_not_file(None, "cassandra", spec))
        return
    assert why_not_file(None, "cassandra", spec) is None
    data = _file_spec({"gen": "dataset", "column": "name", "dataset": "people"})
    assert why_not_file(None, "cassandra", data) == (
        'the Rust core does not bind this workload file: op get binds id to gen = "dataset" '
        "(data sets run on the Python path)")
