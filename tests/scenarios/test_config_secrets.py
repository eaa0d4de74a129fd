"""Secrets a careless inventory reveals: a commented-out password, a password inside an
action template, a numeric password. None reaches the store (events, logs, reasons,
the stored inventory text), an export, a report, or an error message."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtower.cli import main
from loadtower.errors import ConfigError
from loadtower.orchestrator.secrets import known_secrets
from loadtower.scenarios.loader import load_inventory
from loadtower.scenarios.plan import load_plan
from loadtower.store import StoreReader, StoreWriter
from loadtower.store.redact import command_secrets, redact

from .conftest import INVENTORY, SCENARIO

OLD = "Old-comment-pw-77"
TEMPLATE_PW = "Tmpl-s3cret-91"
ENV_PW = "Env-s3cret-23"
INV = INVENTORY.replace(
    'password_env = "LT_PW"\n',
    f'password_env = "LT_PW"\n# password = "{OLD}"\n',
).replace(
    'compact = "nodetool compact"\n',
    f'compact = "nodetool compact"\nstatus = "nodetool -u bench -pw {TEMPLATE_PW} status"\n'
    f'flush = "PGPASSWORD={ENV_PW} nodetool --password-file /etc/pw flush {{keyspace}}"\n',
    1,
)
SECRETS = (OLD, TEMPLATE_PW, ENV_PW)


def test_redact_masks_comments_and_commands() -> None:
    text = redact(INV) or ""
    assert not any(s in text for s in SECRETS), text
    assert '# password = *****' in text
    assert "-pw ***** status" in text and "PGPASSWORD=***** nodetool --password-file /etc/pw" in text
    assert redact('user = "u"  # token: abc123\n') == 'user = "u"  # token: *****\n'
    assert redact('kill = "kill -9 $(cat /tmp/pid) # not a secret"\n') == (
        'kill = "kill -9 $(cat /tmp/pid) # not a secret"\n'
    )


def test_command_secrets() -> None:
    assert command_secrets("nodetool -u bench -pw 'a b' status") == ["a b"]
    assert command_secrets("x --password=abcd --token t0k y") == ["abcd", "t0k"]
    assert command_secrets("curl http://u:urlpw@h/ ; X_SECRET=\"s s\" y") == ["s s", "urlpw"]
    assert command_secrets("PASSWORD=bare1 cmd; CASSANDRA_PASSWORD=cp2 x; a=b") == ["bare1", "cp2"]
    # a port, a password file and a placeholder are not secrets
    assert command_secrets("nodetool -p 7199 --password-file /f -pw {password} x") == []


def test_no_secret_reaches_the_store_an_export_or_a_report(
    write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("LT_PW", "Db-password-55")
    plan = load_plan(write("s.toml", SCENARIO), write("inv.toml", INV))
    secrets = known_secrets(plan)
    assert {TEMPLATE_PW, ENV_PW, "Db-password-55"} <= set(secrets)
    store = tmp_path / "s.duckdb"
    writer = StoreWriter(store)
    writer.secrets = secrets
    run_id = writer.start_run("t", "t", plan.scenario_text, plan.inventory_text, {}, {}, {})
    command = plan.inventory.hosts["db1"].actions["status"]
    writer.event(run_id, 1.0, "action", f"host db1: `{command}` did not finish within 5 s",
                 host="db1", data={"error": command})
    writer.log(run_id, 1.0, "db1", "action:flush", f"ran {plan.inventory.hosts['db1'].actions['flush']}")
    writer.end_run(run_id, "failed", f"host db1: `{command}` did not finish within 5 s")
    writer.close()
    reader = StoreReader(store)
    seen = ""
    for table in ("runs", "events", "logs", "phases"):
        columns, rows = reader.sql(f"SELECT * FROM {table}")
        seen += repr(rows)
    assert "nodetool -u bench -pw ***** status" in seen
    assert not any(s in seen for s in (*SECRETS, "Db-password-55")), seen
    out = tmp_path / "export"
    assert main(["export", run_id, "--store", str(store), "--format", "csv", "--out", str(out)]) == 0
    assert main(["report", run_id, "--store", str(store), "--out", str(tmp_path / "r.html")]) == 0
    written = "".join(p.read_text(errors="replace") for p in [*out.rglob("*.csv"), tmp_path / "r.html"])
    assert "*****" in written and not any(s in written for s in SECRETS)
    capsys.readouterr()


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("password = 12345678", "wrong type: expected a string, got integer (not shown)"),
        ("password = [98765432]", "wrong type: expected a string, got list (not shown)"),
        ("password_file = 99887766", "wrong type: expected a string, got integer (not shown)"),
    ],
)
def test_an_error_never_echoes_a_secret(write, line: str, shown: str) -> None:
    text = INVENTORY.replace('password_env = "LT_PW"', line)
    with pytest.raises(ConfigError) as info:
        load_inventory(write("inv.toml", text))
    message = str(info.value)
    assert message.endswith(f":11: key 'cassandra.{line.split()[0]}': {shown}")
    assert not any(d in message for d in ("12345678", "98765432", "99887766"))


def test_a_bad_prometheus_url_hides_its_password(write) -> None:
    text = INVENTORY.replace('"http://127.0.0.1:9090"', '"http://admin:Prom-pw-123@ bad host"')
    with pytest.raises(ConfigError) as info:
        load_inventory(write("inv.toml", text))
    assert "Prom-pw-123" not in str(info.value) and "admin:*****@" in str(info.value)
