"""What a run will need from this machine and is missing: warnings of ``loadtower check``.

The files themselves are valid; these are facts of the machine where ``check`` runs,
which need not be the one that runs the benchmark (a laptop checks, a bench host runs;
CI checks without the secrets). So they are warnings, one line each (file, line, key),
and ``check`` still exits 0. ``run`` fails on each with one line of its own (SSH key,
host key refused, "the password variable $X ... is not set").

- an SSH key file (``[ssh].key``, a host's ``ssh_key``) that does not exist;
- a known_hosts file that does not exist while new host keys are not accepted (every
  host's key would be refused; ``--accept-new-host-keys`` writes it);
- a ``password_env`` variable that is not set, a ``password_file`` that does not exist;
- a TLS file (``tls_ca_file``, ``tls_cert_file``, ``tls_key_file`` of an ``[ENGINE]``
  table whose engine reads them, its kind's ``tls_files``; relative to the inventory's
  folder) that does not exist or cannot be read. ``run`` refuses these before it starts (``check_tls_files``: file, line, key,
  exit 2): the orchestrator reads them and sends their contents to the agents.
"""

from __future__ import annotations

import os
from pathlib import Path

from loadtower.errors import ConfigError
from loadtower.protocol.engine_kinds import engine_names, with_capability
from loadtower.scenarios.models import TLS_FILE_KEYS
from loadtower.scenarios.plan import Plan
from loadtower.scenarios.toml_lines import LineIndex, format_path
from loadtower.scenarios.toml_lines import Path as KeyPath


def _file(value: str, base: Path) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def tls_path(value: str, inventory_file: str | Path) -> Path:
    """A TLS file named in the inventory: ``~`` expanded, relative to its folder."""
    return _file(value, Path(inventory_file).parent)


def file_problem(path: Path) -> str | None:
    """Why ``path`` is not a readable regular file, or None."""
    if not path.exists():
        return f"file {path} does not exist"
    if not path.is_file():
        return f"{path} is not a regular file"
    if not os.access(path, os.R_OK):
        return f"file {path} cannot be read (permissions)"
    return None


def tls_file_problems(plan: Plan) -> list[tuple[KeyPath, str]]:
    """(key, problem) for each TLS file of an engine that reads them (``tls_files``) that
    cannot be read here."""
    out: list[tuple[KeyPath, str]] = []
    for engine in with_capability(tls_files=True):
        creds = plan.inventory.credentials(engine)
        for key in TLS_FILE_KEYS:
            value = getattr(creds, key)
            if value is not None:
                problem = file_problem(tls_path(value, plan.inventory_path))
                if problem:
                    out.append(((engine, key), problem))
    return out


def check_tls_files(plan: Plan) -> None:
    """ConfigError (file, line, key) for the first TLS file a run could not read."""
    for path, problem in tls_file_problems(plan):
        line = LineIndex(plan.inventory_text).line_of(path)
        raise ConfigError(str(plan.inventory_path), line, format_path(path), problem)


def environment_warnings(plan: Plan) -> list[str]:
    """One line per missing key file, known_hosts file, password variable or file."""
    inv, file = plan.inventory, str(plan.inventory_path)
    index = LineIndex(plan.inventory_text)
    out: list[str] = []

    def warn(path: KeyPath, problem: str) -> None:
        line = index.line_of(path)
        where = file if line is None else f"{file}:{line}"
        out.append(f"{where}: key '{format_path(path)}': {problem}")

    keys: list[tuple[KeyPath, str]] = []
    if inv.ssh.key:
        keys.append((("ssh", "key"), inv.ssh.key))
    keys += [(("hosts", n, "ssh_key"), h.ssh_key) for n, h in inv.hosts.items() if h.ssh_key]
    for path, value in keys:
        # asyncssh opens a relative key path from the working directory
        if not Path(value).expanduser().is_file():
            warn(path, f"the SSH key file {value} does not exist (the run cannot log in)")
    if not inv.ssh.accept_new_host_keys:
        known = inv.ssh.known_hosts_file()
        if not known.is_file():
            warn(
                ("ssh", "known_hosts"),
                f"the known_hosts file {known} does not exist: every host key will be "
                "refused (run with --accept-new-host-keys to trust and record new hosts)",
            )
    for engine in engine_names():
        creds = inv.credentials(engine)
        if creds.password_env and creds.password_env not in os.environ:
            warn(
                (engine, "password_env"),
                f"the variable ${creds.password_env} is not set here (a run needs it)",
            )
        if creds.password_file:
            found = _file(creds.password_file, plan.inventory_path.parent)
            if not found.is_file():
                warn((engine, "password_file"), f"the file {found} does not exist")
    for path, problem in tls_file_problems(plan):
        warn(path, problem)
    return out
