"""The run's link key and database secrets, put on the agent hosts over SSH.

At the start of a run a random link key is made (protocol/link_secrets.py); it goes to
the Locust master in its environment and to each agent host as a 0600 file in the
run's private directory there (agents/secret_dir.py), written by a command over SSH
that reads it from stdin. Before each phase, `strip` takes the password and the TLS
client key out of the master's ``start`` command and puts them in that directory the
same way (once per secret and host), so that they never cross the workers' link to the
master. `remove` deletes the directory at the end of the run; `loadtower cleanup`
removes those of runs that died (cleanup_secrets.py).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import shlex
from typing import Any

from loadtower.errors import LoadtowerError
from loadtower.protocol.link_secrets import LINK_KEY_BYTES, LINK_KEY_FILE, split_secrets

PUT_TIMEOUT_S = 30.0


class AgentSecrets:
    def __init__(self, pool: Any, run_id: str) -> None:
        self.pool, self.run_id = pool, run_id
        self.key = secrets.token_bytes(LINK_KEY_BYTES)
        self.pythons: dict[str, str] = {}  # agent host -> its python
        self.dirs: dict[str, str] = {}  # agent host -> its private directory for the run
        self.sent: dict[str, set[str]] = {}  # agent host -> secret files written there

    async def open(self, host: str, python: str) -> str:
        """Make the run's private directory on `host` with the link key; its path."""
        self.pythons[host] = python
        self.sent[host] = set()
        self.dirs[host] = await self._put(host, {LINK_KEY_FILE: self.key.hex()})
        return self.dirs[host]

    async def _put(self, host: str, files: dict[str, str]) -> str:
        command = (f"{shlex.quote(self.pythons[host])} -m loadtower.agents.secret_dir put "
                   f"{shlex.quote(self.run_id)}")
        status, out, err = await self.pool.run(host, command, timeout=PUT_TIMEOUT_S,
                                               input=json.dumps(files))
        if status != 0:
            raise LoadtowerError(f"host {host}: cannot write the run's secrets: "
                                 f"{err.strip()[-300:] or f'exit status {status}'}")
        self.sent[host].update(files)
        return out.strip()

    async def strip(self, command: dict[str, Any]) -> dict[str, Any]:
        """The master's `command` without its secrets; they are on every agent host first."""
        out, files = split_secrets(command, self.key)
        await asyncio.gather(*(self._put(host, {n: v for n, v in files.items() if n not in sent})
                               for host, sent in self.sent.items()
                               if set(files) - sent))
        return out

    async def remove(self) -> list[str]:
        """Remove the run's private directory from every agent host; the problems."""
        async def one(host: str) -> str | None:
            command = (f"{shlex.quote(self.pythons[host])} -m loadtower.agents.secret_dir "
                       f"remove {shlex.quote(self.run_id)}")
            try:
                status, _out, err = await self.pool.run(host, command, timeout=PUT_TIMEOUT_S)
            except LoadtowerError as exc:
                return f"{host}: {exc}"
            return None if status == 0 else f"{host}: {err.strip()[-300:]}"

        results = await asyncio.gather(*(one(h) for h in self.dirs))
        return [r for r in results if r]
