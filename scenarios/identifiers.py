"""Names that end up inside statements or shell commands, and what each accepts.

A keyspace, table, database or column name from a scenario goes into DDL and
statements; a host name and address go into node action commands (run by a shell
over SSH). So they are checked when the file is loaded, with one line naming file,
line and key:

- any target name (``keyspace``, ``table``, ``order_by`` columns, skip index names,
  ``[engine].database``): ``NAME`` = a letter or ``_``, then letters, digits or ``_``,
  at most 128 characters (no quoting needed); an engine whose names are stricter says
  so in its own ``check_target`` hook (scenarios/engine_hooks.py);
- a name that must suit every engine at once (the table of a YCSB property file, which
  any target may run): ``PORTABLE_NAME``, a letter first, at most 48 characters, the
  strictest of the engines' rules;
- host names (the ``[hosts.NAME]`` keys): a letter or digit, then letters, digits,
  ``_``, ``.`` or ``-``, at most 63 characters; two names that differ only in case are
  one host written twice;
- ``address`` and ``ssh_host``: a DNS name or an IPv4/IPv6 address (letters, digits,
  ``.``, ``-``, ``_``, ``:``), at most 253 characters.
"""

from __future__ import annotations

import re

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
PORTABLE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,47}")
HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
ADDRESS = re.compile(r"[A-Za-z0-9_.:-]{1,253}")

NAME_RULE = "a letter or _, then letters, digits or _ (at most 128)"
PORTABLE_RULE = "a name every engine takes unquoted: a letter, then letters, digits or _ (at most 48)"
HOST_RULE = "a letter or digit, then letters, digits, _, . or - (at most 63)"
ADDRESS_RULE = "a DNS name or an IP address: letters, digits, . - _ : (at most 253)"


def name_problem(value: str) -> str | None:
    """Why `value` cannot be a keyspace/table/database/column name, or None."""
    if NAME.fullmatch(value):
        return None
    return f"invalid name {value!r}: expected {NAME_RULE}"


def host_name_problem(value: str) -> str | None:
    if HOST_NAME.fullmatch(value):
        return None
    return f"invalid host name {value!r}: expected {HOST_RULE}"


def address_problem(value: str) -> str | None:
    if ADDRESS.fullmatch(value):
        return None
    return f"invalid address {value!r}: expected {ADDRESS_RULE}"
