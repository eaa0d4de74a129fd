"""The session sandbox's Redis host (redis1), for the tests that run through it."""

from __future__ import annotations

import pytest

from loadtower.engines.redis.sandbox.service import SERVICE


@pytest.fixture(scope="session")
def redis(sandbox: dict) -> dict:
    """The sandbox's Redis host: url, port, username, password, ... . Skipped where
    redis-server is not installed (scripts/install.sh installs it); a sandbox without it
    where it is installed is a failure, not a skip."""
    info = sandbox.get("redis") or {}
    if not info.get("enabled"):
        reason = info.get("reason") or "the sandbox runs no Redis host"
        if SERVICE.available():
            pytest.fail(f"redis-server is installed but {reason}")
        pytest.skip(reason)
    return info
