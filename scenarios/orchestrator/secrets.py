"""Database passwords: from an environment variable or a file, never from the store."""

from __future__ import annotations

import os
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.scenarios.plan import Plan


def db_password(plan: Plan) -> str | None:
    creds = plan.inventory.credentials(plan.scenario.engine)
    if creds.password_env:
        value = os.environ.get(creds.password_env)
        if value is None:
            raise LoadtowerError(
                f"{plan.inventory_path}: the password variable "
                f"${creds.password_env} ([{plan.scenario.engine}].password_env) is not set"
            )
        return value
    if creds.password_file:
        path = Path(creds.password_file)
        if not path.is_absolute():
            path = plan.inventory_path.parent / path
        try:
            return path.read_text().strip()
        except OSError as exc:
            raise LoadtowerError(
                f"{plan.inventory_path}: cannot read [{plan.scenario.engine}]."
                f"password_file {path}: {exc.strerror}"
            ) from None
    return creds.password


def known_secrets(plan: Plan) -> list[str]:
    """Every secret this plan can reveal, for masking in logs and events."""
    secrets = []
    for engine in ("cassandra", "scylla", "clickhouse"):
        creds = plan.inventory.credentials(engine)
        if creds.password:
            secrets.append(creds.password)
    try:
        value = db_password(plan)
    except LoadtowerError:
        value = None
    if value:
        secrets.append(value)
    return [s for s in secrets if len(s) >= 4]
