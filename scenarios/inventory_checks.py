"""Checks of an inventory's values that its types cannot express, run when it is loaded.

- ``[metrics].prometheus_url`` is an http(s) URL with a host (port optional).
- Every node action is a command template whose placeholders the orchestrator fills
  (``ACTION_PLACEHOLDERS``, the keys of ``PhaseContext.placeholders``), so a typo such
  as ``{keyspac}`` fails ``loadtower check`` instead of the run. The orchestrator
  quotes every value it puts in for the shell (fleet/ssh_pool.py ``run_action``).
- Host names are one host each: two that differ only in case (``db1``, ``DB1``) are the
  same host written twice; so are two DB hosts on one address and port.
"""

from __future__ import annotations

import difflib
import re
import string
from urllib.parse import urlsplit

from loadtower.errors import ConfigError
from loadtower.protocol.engine_kinds import KINDS
from loadtower.scenarios.models import Inventory
from loadtower.scenarios.toml_lines import LineIndex, Path, format_path
from loadtower.store.redact import mask_url_passwords

ACTION_PLACEHOLDERS = ("address", "host", "keyspace", "table")
_BRACES = "write {{ and }} for a literal brace"


def url_problem(url: str) -> str | None:
    """Why ``url`` is not an http(s) URL with a host, or None when it is one."""
    bad = f"expected an http(s) URL with a host, such as http://127.0.0.1:9090 (got {url!r})"
    if any(c.isspace() for c in url):
        return bad
    try:  # urlsplit itself refuses some hosts, e.g. an empty or malformed [IPv6] one
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return bad
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return bad
    if port is not None and not 0 < port < 65536:
        return bad
    return None


def _known() -> str:
    return ", ".join("{" + p + "}" for p in ACTION_PLACEHOLDERS)


def template_problem(template: str) -> str | None:
    """Why ``template`` cannot be filled with the action placeholders, or None."""
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        return f"invalid command template: {exc} ({_BRACES})"
    for field in fields:
        base = re.split(r"[.\[]", field, maxsplit=1)[0]
        if base not in ACTION_PLACEHOLDERS:
            close = difflib.get_close_matches(base, ACTION_PLACEHOLDERS, n=1, cutoff=0.6)
            hint = f" (did you mean {{{close[0]}}}?)" if close else ""
            return f"unknown placeholder {{{field}}}{hint}; placeholders: {_known()} ({_BRACES})"
        if base != field:
            return f"placeholder {{{field}}}: use a plain placeholder ({_known()})"
    try:
        template.format(**{p: "x" for p in ACTION_PLACEHOLDERS})
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as exc:
        return f"invalid command template: {exc} ({_BRACES})"
    return None


def check_inventory_values(inventory: Inventory, source: str, file: str) -> None:
    """Raise ConfigError (file, line, key) for the first bad URL or command template."""
    index: LineIndex | None = None

    def fail(path: Path, problem: str) -> ConfigError:
        nonlocal index
        index = index or LineIndex(source)
        return ConfigError(file, index.line_of(path), format_path(path), problem)

    url = inventory.metrics.prometheus_url
    if url is not None:
        problem = url_problem(url)
        if problem:
            raise fail(("metrics", "prometheus_url"), mask_url_passwords(problem))
    seen: dict[str, str] = {}
    for name in inventory.hosts:
        other = seen.setdefault(name.casefold(), name)
        if other != name:
            raise fail(
                ("hosts", name),
                f"host '{name}' is host '{other}' written again (host names ignore case)",
            )
    addresses: dict[tuple[str, int], str] = {}
    for name, host in inventory.hosts.items():
        if "db" not in host.roles or host.engine not in KINDS:
            continue
        port = inventory.db_port(name, str(host.engine))
        other = addresses.setdefault((host.address.casefold(), port), name)
        if other != name:
            raise fail(
                ("hosts", name, "address"),
                f"hosts '{other}' and '{name}' are one database node "
                f"({host.address} port {port}): list it once",
            )
    for name, host in inventory.hosts.items():
        for action, template in host.actions.items():
            problem = template_problem(template)
            if problem:
                raise fail(("hosts", name, "actions", action), problem)
