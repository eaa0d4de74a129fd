"""Bad inventories: unknown and missing keys, invalid TOML, a bad Prometheus URL and
command templates with unknown placeholders all fail at load time (and `check`)."""

from __future__ import annotations

import pytest

from loadtower.cli import main
from loadtower.errors import ConfigError
from loadtower.orchestrator.context import PhaseContext
from loadtower.scenarios.inventory_checks import ACTION_PLACEHOLDERS, template_problem
from loadtower.scenarios.loader import load_inventory
from loadtower.scenarios.plan import load_plan

from .conftest import INVENTORY, SCENARIO

KNOWN = "placeholders: {address}, {host}, {keyspace}, {table} (write {{ and }} for a literal brace)"


def inventory_error(write, text: str) -> str:
    path = write("inv.toml", text)
    with pytest.raises(ConfigError) as info:
        load_inventory(path)
    return str(info.value).replace(str(path), "inv.toml")


def test_misspelled_key_is_named_not_the_missing_one(write) -> None:
    text = INVENTORY.replace('roles = ["db"]', 'role = ["db"]', 1)
    assert inventory_error(write, text) == (
        "inv.toml:16: key 'hosts.db1.role': unknown key (did you mean 'roles'?)"
    )


def test_unknown_key(write) -> None:
    text = INVENTORY.replace('user = "root"', 'usr = "root"')
    assert inventory_error(write, text) == (
        "inv.toml:2: key 'ssh.usr': unknown key (did you mean 'user'?)"
    )


def test_host_without_address(write) -> None:
    text = INVENTORY.replace('address = "127.0.0.1"\n', "", 1)
    assert inventory_error(write, text) == (
        "inv.toml:13: key 'hosts.db1.address': missing required key"
    )


def test_missing_hosts_names_line_1(write) -> None:
    text = INVENTORY[: INVENTORY.index("[hosts.db1]")]
    assert inventory_error(write, text) == "inv.toml:1: key 'hosts': missing required key"


def test_invalid_toml(write) -> None:
    text = INVENTORY.replace("ssh_port = 2222", "ssh_port = = 2222", 1)
    assert inventory_error(write, text) == "inv.toml:15: invalid TOML: Invalid value"


def test_unclosed_table_header(write) -> None:
    text = INVENTORY.replace("[hosts.agent1]", "[hosts.agent1")
    assert inventory_error(write, text) == (
        "inv.toml:34: invalid TOML: Expected ']' at the end of a table declaration"
    )


@pytest.mark.parametrize(
    "url",
    [
        "not a url",
        "127.0.0.1:9090",
        "ftp://127.0.0.1:9090",
        "http://",
        "http://h:99999",
        "http://h:port",
        "http://h :9090",
        "http://[]:9090",  # urlsplit raises on it (found by the fuzz test)
        "http://[zz]/",
    ],
)
def test_bad_prometheus_url(write, url: str) -> None:
    text = INVENTORY.replace('"http://127.0.0.1:9090"', f'"{url}"')
    assert inventory_error(write, text) == (
        "inv.toml:7: key 'metrics.prometheus_url': expected an http(s) URL with a host, "
        f"such as http://127.0.0.1:9090 (got {url!r})"
    )


@pytest.mark.parametrize(
    "url", ["http://10.0.0.5:9090", "https://prometheus.example.com", "http://[::1]:9090/prom"]
)
def test_good_prometheus_url(write, url: str) -> None:
    inventory, _ = load_inventory(
        write("inv.toml", INVENTORY.replace('"http://127.0.0.1:9090"', f'"{url}"'))
    )
    assert inventory.metrics.prometheus_url == url


def test_unknown_placeholder(write) -> None:
    text = INVENTORY.replace(
        'compact = "nodetool compact"', 'compact = "nodetool compact {keyspac}"', 1
    )
    assert inventory_error(write, text) == (
        "inv.toml:21: key 'hosts.db1.actions.compact': unknown placeholder {keyspac} "
        f"(did you mean {{keyspace}}?); {KNOWN}"
    )


def test_check_command_names_the_bad_template(write, capsys) -> None:
    s = write("s.toml", SCENARIO)
    i = write("inv.toml", INVENTORY.replace('start = "start-node 2"', 'start = "start-node {nod}"'))
    assert main(["check", str(s), "--inventory", str(i)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"loadtower check: {i}:31: key 'hosts.db2.actions.start': unknown placeholder {{nod}}; "
        + KNOWN
    ]


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("awk '{print $1}' /tmp/pid", f"unknown placeholder {{print $1}}; {KNOWN}"),
        ("kill {}", f"unknown placeholder {{}}; {KNOWN}"),
        (
            "echo }",
            "invalid command template: Single '}' encountered in format string "
            "(write {{ and }} for a literal brace)",
        ),
        (
            "echo {host",
            "invalid command template: expected '}' before end of string "
            "(write {{ and }} for a literal brace)",
        ),
        (
            "echo {host.upper}",
            "placeholder {host.upper}: use a plain placeholder "
            "({address}, {host}, {keyspace}, {table})",
        ),
        (
            "echo {host!z}",
            "invalid command template: Unknown conversion specifier z "
            "(write {{ and }} for a literal brace)",
        ),
    ],
)
def test_bad_templates(template: str, problem: str) -> None:
    assert template_problem(template) == problem


@pytest.mark.parametrize(
    "template",
    [
        "nodetool compact {keyspace} {table}",
        "ssh {address} true # {host}",
        "awk '{{print $1}}' /tmp/pid",
        "no placeholders at all",
    ],
)
def test_good_templates(template: str) -> None:
    assert template_problem(template) is None


def test_placeholders_are_the_ones_the_orchestrator_fills(write) -> None:
    plan = load_plan(write("s.toml", SCENARIO), write("inv.toml", INVENTORY))
    ctx = PhaseContext(plan, "run", store=None, load=None, actions=None, control=None)  # type: ignore[arg-type]
    assert sorted(ctx.placeholders("db1")) == sorted(ACTION_PLACEHOLDERS)
