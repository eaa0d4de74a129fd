"""Secrets are removed from scenario and inventory text, whatever TOML/YAML form they take."""

from __future__ import annotations

import tomllib

import pytest

from loadtower.store import StoreReader, StoreWriter
from loadtower.store.redact import MASK, redact

SECRET = "hunter2-S3cr3t"

CASES = {
    "toml inline table": (
        f'[hosts.db1]\ncassandra = {{ user = "lt", password = "{SECRET}" }}\nport = 9042\n',
        'cassandra = { user = "lt", password = ***** }',
    ),
    "toml inline table, tricky string": (
        f'cassandra = {{ password = "{SECRET},}}\\"x", user = "lt" }}\n',
        'cassandra = { password = *****, user = "lt" }',
    ),
    "toml inline tables in an array": (
        f"hosts = [{{ name = 'a', ssh_password = '{SECRET}' }}, "
        f"{{ name = 'b', token = '{SECRET}' }}]\n",
        "hosts = [{ name = 'a', ssh_password = ***** }, { name = 'b', token = ***** }]",
    ),
    "toml multi-line basic string": (
        f'password = """\n{SECRET}\nsecond line\n"""\nafter = 1\n',
        "password = *****\nafter = 1\n",
    ),
    "toml multi-line literal string": (
        f"[auth]\npassword = '''{SECRET}\n{SECRET}'''\nuser = 'lt'\n",
        "[auth]\npassword = *****\nuser = 'lt'\n",
    ),
    "toml one-line triple-quoted": (
        f'password = """{SECRET}"""\nx = 1\n', "password = *****\nx = 1\n",
    ),
    "toml array spanning lines": (
        f'tokens = [\n  "{SECRET}",\n  "{SECRET}",\n]\nz = 1\n', "tokens = *****\nz = 1\n",
    ),
    "yaml block scalar": (
        f"db:\n  password: |\n    {SECRET}\n    more\n\n  user: bob\n",
        "db:\n  password: *****\n\n  user: bob\n",
    ),
    "yaml folded scalar in a list": (
        f"items:\n  - password: >-\n      {SECRET}\n      {SECRET}\n  - name: x\n",
        "items:\n  - password: *****\n  - name: x\n",
    ),
    "yaml flow mapping": (
        f"db: {{password: {SECRET}, user: bob}}\n", "db: {password: *****, user: bob}\n",
    ),
    "url": (f"contact = 'cql://bob:{SECRET}@db1:9042'\n", "cql://bob:*****@db1:9042"),
    "plain lines (as before)": (
        f"db:\n  password: {SECRET}\n  api_token = '{SECRET}'\nuser: bob\n- secret: x # c\n",
        "db:\n  password: *****\n  api_token = *****\nuser: bob\n- secret: *****\n",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_form_is_masked(name: str) -> None:
    text, expected = CASES[name]
    out = redact(text)
    assert SECRET not in out and "second line" not in out and "more\n" not in out, out
    assert expected in out, out
    assert MASK in out


def test_other_keys_and_line_endings_are_kept() -> None:
    text = 'name = "run"\r\nkey = """\nnot secret\n"""\r\nnotes: |\n  keep me\n'
    assert redact(text) == text
    assert redact(f'token = "{SECRET}" \r\nx = 1\r\n') == "token = *****\r\nx = 1\r\n"


def test_toml_that_stays_valid_stays_valid() -> None:
    """Masking inside inline tables keeps the other keys readable by a TOML parser."""
    text = f'cassandra = {{ user = "lt", password = "{SECRET}" }}\n'
    masked = redact(text).replace(MASK, f'"{MASK}"')
    assert tomllib.loads(masked) == {"cassandra": {"user": "lt", "password": MASK}}


def test_the_store_holds_no_secret(tmp_path) -> None:  # noqa: ANN001
    scenario = "".join(text for text, _ in CASES.values())
    path = tmp_path / "s.duckdb"
    with StoreWriter(path) as writer:
        run_id = writer.start_run("r", "scn", scenario, scenario, {}, {}, {})
        writer.end_run(run_id, "completed", None)
    row = StoreReader(path).run(run_id)
    assert SECRET not in row["scenario_text"] and SECRET not in row["inventory_text"]
    assert SECRET.encode() not in path.read_bytes()
