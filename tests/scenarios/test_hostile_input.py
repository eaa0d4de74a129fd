"""Hostile and careless configuration: names that would inject commands or statements,
numbers out of range, huge or endless input files, duplicate hosts, a BOM. Each ends
in one line naming file, line and key (exit 2), or in safe output."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from loadtower.cli import main
from loadtower.engines.cassandra.agent.schemas import cql_name
from loadtower.engines.clickhouse.agent.schemas import sql_name
from loadtower.errors import ConfigError
from loadtower.fleet.ssh_pool import HostPool, action_command
from loadtower.scenarios.loader import MAX_INPUT_BYTES, load_inventory, load_scenario
from loadtower.scenarios.plan import load_plan
from tests.scenarios import builtin_render as render

from .conftest import INVENTORY, SCENARIO

HOSTILE = "ks; touch {dir}/PWNED #"


def plan_error(write, scenario: str, inventory: str = INVENTORY) -> str:
    s, i = write("s.toml", scenario), write("inv.toml", inventory)
    with pytest.raises(ConfigError) as info:
        load_plan(s, i)
    return str(info.value).replace(str(s), "s.toml").replace(str(i), "inv.toml")


def with_target(keys: str) -> str:
    return SCENARIO.replace('engine = "cassandra"\n', f'engine = "cassandra"\n\n[target]\n{keys}\n', 1)


# ---------------------------------------------------------------- 1. identifiers
def test_a_keyspace_that_injects_a_command_fails_check(write, tmp_path: Path) -> None:
    hostile = HOSTILE.format(dir=tmp_path)
    error = plan_error(write, with_target(f'keyspace = "{hostile}"'))
    assert error.startswith("s.toml:5: key 'target.keyspace': invalid name 'ks; touch ")
    assert "letters, digits or _" in error and "\n" not in error


def test_an_honest_but_invalid_cql_name_fails_check_not_the_run(write) -> None:
    assert plan_error(write, with_target('keyspace = "bench-1"')) == (
        "s.toml:5: key 'target.keyspace': invalid name 'bench-1': expected a letter or _, "
        "then letters, digits or _ (at most 128)"
    )
    # valid for ClickHouse, not for CQL: the CQL rule at check, naming the key
    assert plan_error(write, with_target('keyspace = "_ks"')) == (
        "s.toml:5: key 'target.keyspace': invalid CQL name '_ks': expected CQL's unquoted "
        "identifier: a letter, then letters, digits or _ (at most 48)"
    )
    long = "k" * 49
    assert f"invalid CQL name '{long}'" in plan_error(write, with_target(f'keyspace = "{long}"'))
    text = SCENARIO.replace('preset = "ycsb-a"', 'preset = "ycsb-a"\ntable = "t x"')
    assert "s.toml:9: key 'workloads.main.table': invalid name 't x'" in plan_error(write, text)
    plan = load_plan(write("s.toml", with_target('keyspace = "Bench_1"')), write("i.toml", INVENTORY))
    assert plan.scenario.target.keyspace == "Bench_1"


def test_clickhouse_names_order_by_and_skip_indexes(write) -> None:
    base = SCENARIO.replace('engine = "cassandra"', 'engine = "clickhouse"')
    cases = {
        'order_by = ["y_id", "x)"]': "key 'target.order_by[1]': invalid name 'x)'",
        'skip_indexes = { "a b" = "TYPE set(1)" }': "key 'target.skip_indexes.a b': invalid name",
        'skip_indexes = { i = "TYPE set(1); DROP TABLE x" }': "invalid skip index definition",
    }
    for keys, expected in cases.items():
        path = write("s.toml", base.replace('engine = "clickhouse"\n', f'engine = "clickhouse"\n[target]\n{keys}\n', 1))
        with pytest.raises(ConfigError) as info:
            load_scenario(path)
        assert expected in str(info.value), str(info.value)


def test_host_names_and_addresses(write) -> None:
    bad_name = INVENTORY.replace("[hosts.agent1]", '[hosts."agent;id"]')
    with pytest.raises(ConfigError) as info:
        load_inventory(write("inv.toml", bad_name))
    assert "key 'hosts.agent;id': invalid host name 'agent;id'" in str(info.value)
    bad_address = INVENTORY.replace('address = "127.0.0.2"', 'address = "127.0.0.2 $(id)"')
    with pytest.raises(ConfigError) as info:
        load_inventory(write("inv.toml", bad_address))
    assert str(info.value).endswith(
        ":24: key 'hosts.db2.address': invalid address '127.0.0.2 $(id)': expected a DNS "
        "name or an IP address: letters, digits, . - _ : (at most 253)"
    )


def test_an_action_placeholder_is_one_shell_word(tmp_path: Path) -> None:
    """The real substitution, run by a real shell: the value is an argument, never code."""
    hostile = HOSTILE.format(dir=tmp_path)
    command = action_command(
        "printf '%s|' compact {keyspace} {table} {host}",
        {"keyspace": hostile, "table": "", "host": "db1", "address": "127.0.0.1"},
    )
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"compact|{hostile}|db1|"  # an empty {table}: no argument at all
    assert not (tmp_path / "PWNED").exists()
    for value in ("$(touch x)", "`touch x`", "a'b", '"; touch x', "x\ntouch y"):
        out = subprocess.run(["sh", "-c", action_command("printf %s {host}", {"host": value})],
                             capture_output=True, text=True, timeout=30, cwd=tmp_path)
        assert out.stdout == value
    assert list(tmp_path.iterdir()) == []


class LocalShellPool(HostPool):
    """The real run_action; its command goes to a local shell instead of over SSH (sshd
    runs a command the same way: the login shell's -c)."""

    async def run(self, name: str, command: str, timeout: float = 60.0) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            "sh", "-c", command, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
        return proc.returncode or 0, out.decode(), err.decode()


def test_run_action_quotes_the_placeholders(write, tmp_path: Path) -> None:
    inventory, _ = load_inventory(write("inv.toml", INVENTORY.replace(
        'compact = "nodetool compact"\n', 'compact = "echo nodetool compact {keyspace}"\n', 1)))
    hostile = HOSTILE.format(dir=tmp_path)
    status, out, _err = asyncio.run(LocalShellPool(inventory).run_action(
        "db1", "compact", timeout=30, keyspace=hostile, table="", host="db1",
        address="127.0.0.1"))
    assert status == 0 and out == f"nodetool compact {hostile}\n"
    assert not (tmp_path / "PWNED").exists()


def test_statements_quote_names_that_are_not_plain() -> None:
    assert cql_name("loadtower") == "loadtower" and cql_name("Bench_1") == "Bench_1"
    assert cql_name('ks"; DROP KEYSPACE x; --') == '"ks""; drop keyspace x; --"'
    ddl, statements = render.cql("ycsb", "a;b", "t t")
    for sql in [*ddl, *statements]:
        assert '"a;b".' in sql or "KEYSPACE IF NOT EXISTS \"a;b\"" in sql, sql
    assert sql_name("lt") == "lt" and sql_name("bench-1") == "`bench-1`"
    assert sql_name("a`b\\") == "`a\\`b\\\\`"
    db, table = render.clickhouse("ycsb", "bench-1", "t", 1, order_by=["y_id"])
    assert db == "CREATE DATABASE IF NOT EXISTS `bench-1`"
    assert table.startswith("CREATE TABLE IF NOT EXISTS `bench-1`.t (")


# ---------------------------------------------------------------- 7. numbers
@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("rate = 100\n\n", "rate = inf\n\n", "key 'phases[1].rate': Input should be a finite number"),
        ("rate = 100\n\n", "rate = nan\n\n", "key 'phases[1].rate': Input should be a finite number"),
        ("rate = 100\n\n", "rate = 1e9\n\n", "key 'phases[1].rate': Input should be less than or equal to 10000000"),
        ('duration = "10s"', 'duration = "100000000000000000000h"', "key 'phases[1].duration': a duration is at most 30 days"),
        ('duration = "10s"', "duration = 1e20", "key 'phases[1].duration': a duration is at most 30 days"),
        ('duration = "10s"', "duration = nan", "key 'phases[1].duration': a duration must be a finite number"),
        ("records = 1000", f"records = {2**63 - 1}", "key 'dataset.records': Input should be less than or equal to 1000000000000"),
        ("records = 1000", "records = " + "9" * 5000, "invalid TOML: Exceeds the limit (4300 digits)"),
    ],
)
def test_numbers_are_finite_and_bounded(write, old: str, new: str, expected: str) -> None:
    assert old in SCENARIO
    path = write("s.toml", SCENARIO.replace(old, new, 1))
    with pytest.raises(ConfigError) as info:
        load_scenario(path)
    assert expected in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("scale", ["nan", "inf", "-inf", "0", "1e7"])
def test_check_scale_must_be_a_sane_number(write, capsys, scale: str) -> None:
    s, i = write("s.toml", SCENARIO), write("inv.toml", INVENTORY)
    assert main(["check", str(s), "-i", str(i), f"--scale={scale}"]) == 2
    err = capsys.readouterr().err
    assert err == "loadtower check: --scale: must be a number above 0 and at most 1e+06\n"


def test_scale_leaves_a_non_integer_for_validation(write) -> None:
    path = write("s.toml", SCENARIO.replace("records = 1000", 'records = "many"'))
    with pytest.raises(ConfigError, match="key 'dataset.records': wrong type"):
        load_scenario(path, scale=2.0)


def test_deep_nesting_is_one_line(write) -> None:
    path = write("s.toml", "x = " + "[" * 50_000 + "]" * 50_000 + "\n" + SCENARIO)
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_scenario(path)


# ---------------------------------------------------------------- 8. size and kind of files
def test_devices_and_fifos_are_refused(write, tmp_path: Path, capsys) -> None:
    s = write("s.toml", SCENARIO)
    assert main(["check", str(s), "-i", "/dev/zero"]) == 2
    assert capsys.readouterr().err == (
        "loadtower check: /dev/zero: not a regular file (a character device)\n"
    )
    fifo = tmp_path / "inv.fifo"
    os.mkfifo(fifo)  # nobody writes to it: reading it would wait forever
    assert main(["check", str(fifo), "-i", str(fifo)]) == 2
    assert capsys.readouterr().err == f"loadtower check: {fifo}: not a regular file (a FIFO)\n"
    assert main(["check", str(s), "-i", str(tmp_path)]) == 2
    assert "not a regular file (a directory)" in capsys.readouterr().err


def test_a_file_over_the_limit_is_refused(write, tmp_path: Path) -> None:
    huge = tmp_path / "huge.toml"
    with huge.open("wb") as f:  # sparse: 1 GiB that takes no disk
        f.truncate(1 << 30)
    with pytest.raises(ConfigError) as info:
        load_inventory(huge)
    assert str(info.value) == (
        f"{huge}: larger than 1,048,576 bytes (the most an input file may hold)"
    )
    exact = SCENARIO + "#" * (MAX_INPUT_BYTES - len(SCENARIO) - 1) + "\n"
    assert load_scenario(write("s.toml", exact))[0].name == "t"
    with pytest.raises(ConfigError, match="larger than 1,048,576 bytes"):
        load_scenario(write("s.toml", exact + "\n"))


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    s, i = tmp_path / "s.toml", tmp_path / "inv.toml"
    s.write_bytes(b"\xef\xbb\xbf" + SCENARIO.encode())
    i.write_bytes(b"\xef\xbb\xbf" + INVENTORY.encode())
    plan = load_plan(s, i)
    assert plan.scenario.name == "t" and not plan.scenario_text.startswith("\ufeff")
    s.write_bytes(b"\xef\xbb\xbf" + SCENARIO.replace("records = 1000", "recrods = 1").encode())
    with pytest.raises(ConfigError) as info:
        load_plan(s, i)
    assert str(info.value).endswith(":5: key 'dataset.recrods': unknown key (did you mean 'records'?)")


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_bytes(SCENARIO.encode().replace(b'name = "t"', b'name = "t\xff"'))
    with pytest.raises(ConfigError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}:1: not UTF-8 text")


# ---------------------------------------------------------------- 10. duplicate hosts
def test_hosts_differing_only_in_case_are_one_host(write) -> None:
    text = INVENTORY + '\n[hosts.AGENT1]\naddress = "127.0.0.3"\nroles = ["agent"]\n'
    with pytest.raises(ConfigError) as info:
        load_inventory(write("inv.toml", text))
    assert str(info.value).endswith(
        ":39: key 'hosts.AGENT1': host 'AGENT1' is host 'agent1' written again "
        "(host names ignore case)"
    )


def test_a_zero_width_space_does_not_make_another_host(write) -> None:
    text = INVENTORY.replace("[hosts.agent1]", '[hosts."agent1\u200b"]')
    with pytest.raises(ConfigError) as info:
        load_inventory(write("inv.toml", text))
    assert "invalid host name 'agent1\\u200b'" in str(info.value)


def test_one_db_node_listed_twice(write) -> None:
    text = INVENTORY.replace('address = "127.0.0.2"', 'address = "127.0.0.1"')
    with pytest.raises(ConfigError) as info:
        load_inventory(write("inv.toml", text))
    assert str(info.value).endswith(
        ":24: key 'hosts.db2.address': hosts 'db1' and 'db2' are one database node "
        "(127.0.0.1 port 9042): list it once"
    )


# ---------------------------------------------------------------- 10. what the run will miss
def test_check_warns_about_missing_keys_and_secrets(write, tmp_path: Path, capsys,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LT_PW", raising=False)
    inv = INVENTORY.replace("/tmp/key", str(tmp_path / "no-key")).replace(
        "/tmp/known_hosts", str(tmp_path / "no-known-hosts"))
    s, i = write("s.toml", SCENARIO), write("inv.toml", inv)
    assert main(["check", str(s), "-i", str(i)]) == 0
    err = capsys.readouterr().err.replace(str(i), "inv.toml").replace(str(tmp_path), "T")
    assert err.splitlines() == [
        "loadtower check: warning: inv.toml:3: key 'ssh.key': the SSH key file T/no-key does "
        "not exist (the run cannot log in)",
        "loadtower check: warning: inv.toml:4: key 'ssh.known_hosts': the known_hosts file "
        "T/no-known-hosts does not exist: every host key will be refused (run with "
        "--accept-new-host-keys to trust and record new hosts)",
        "loadtower check: warning: inv.toml:11: key 'cassandra.password_env': the variable "
        "$LT_PW is not set here (a run needs it)",
    ]
    (tmp_path / "no-key").write_text("k")
    (tmp_path / "no-known-hosts").write_text("")
    monkeypatch.setenv("LT_PW", "x")
    assert main(["check", str(s), "-i", str(i)]) == 0
    assert capsys.readouterr().err == ""


def test_clickhouse_ddl_with_odd_names_runs_in_the_real_engine() -> None:
    """chdb is ClickHouse's engine in-process: a quoted name is that one name, and a `;`
    in it starts no second statement."""
    session_module = pytest.importorskip("chdb.session")
    session = session_module.Session()
    try:
        for sql in render.clickhouse("ycsb", "bench-1", "t-1; DROP DATABASE x", 2,
                                     order_by=["y_id"]):
            session.query(sql)
        rows = session.query("SELECT database, name FROM system.tables WHERE database = 'bench-1'", "CSV")
        assert str(rows).strip() == '"bench-1","t-1; DROP DATABASE x"'
    finally:
        session.close()
