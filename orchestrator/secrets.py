"""Database passwords: from an environment variable or a file, never from the store.

`known_secrets` lists every password a plan can reveal (any engine's, however it is
given) so that the store writer masks them in everything it writes: events, logs,
phase parameters and results, run reasons (see StoreWriter.secrets). That includes
passwords written into node action templates (``nodetool -u bench -pw ... status``):
a command that times out or fails is named in events and reasons.

A password file is read like an input file: a regular file of at most 64 KiB.
"""

from __future__ import annotations

import os
from pathlib import Path

from loadtower.errors import ConfigError, LoadtowerError
from loadtower.protocol.engine_kinds import engine_names
from loadtower.scenarios.loader import read_input
from loadtower.scenarios.plan import Plan
from loadtower.store.redact import command_secrets

MIN_SECRET_LEN = 4  # shorter values would mask ordinary words and numbers
MAX_PASSWORD_FILE_BYTES = 64 * 1024


def engine_password(plan: Plan, engine: str) -> str | None:
    """The password for `engine` from the inventory: password_env, password_file or password."""
    creds = plan.inventory.credentials(engine)
    if creds.password_env:
        value = os.environ.get(creds.password_env)
        if value is None:
            raise LoadtowerError(
                f"{plan.inventory_path}: the password variable "
                f"${creds.password_env} ([{engine}].password_env) is not set"
            )
        return value
    if creds.password_file:
        path = Path(creds.password_file).expanduser()
        if not path.is_absolute():
            path = plan.inventory_path.parent / path
        try:
            data = read_input(path, MAX_PASSWORD_FILE_BYTES)
            return data.decode("utf-8").strip()
        except (ConfigError, UnicodeDecodeError) as exc:
            reason = exc.problem if isinstance(exc, ConfigError) else "not UTF-8 text"
            raise LoadtowerError(
                f"{plan.inventory_path}: cannot read [{engine}].password_file {path}: {reason}"
            ) from None
    return creds.password


def db_password(plan: Plan) -> str | None:
    return engine_password(plan, plan.scenario.engine)


def known_secrets(plan: Plan) -> list[str]:
    """Every secret this plan can reveal, for masking in logs, events and the store."""
    secrets: list[str] = []
    for engine in engine_names():
        creds = plan.inventory.credentials(engine)
        if creds.password:
            secrets.append(creds.password)
        try:
            value = engine_password(plan, engine)
        except LoadtowerError:
            value = None
        if value:
            secrets.append(value)
    for host in plan.inventory.hosts.values():
        for template in host.actions.values():
            secrets += command_secrets(template)
    unique = {s for s in secrets if len(s) >= MIN_SECRET_LEN}
    return sorted(unique, key=len, reverse=True)  # longest first: no partial masking
