"""Where `loadtower run` serves its live figures for Prometheus: ``[HOST:]PORT``.

Written in an inventory (``[metrics] serve``) or given as ``--metrics-address``:
``9464`` is 127.0.0.1:9464 (loopback: nothing outside this machine can read it),
``0.0.0.0:9464`` every interface, ``[::1]:9464`` an IPv6 address. The port is a fixed
one (1 to 65535): it is what Prometheus's scrape config names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from loadtower.errors import LoadtowerError

DEFAULT_HOST = "127.0.0.1"
_HOST = re.compile(r"[A-Za-z0-9_.-]{1,253}")
_IPV6 = re.compile(r"[0-9A-Fa-f:.]{2,45}")
RULE = "[HOST:]PORT such as 9464 or 127.0.0.1:9464 (PORT from 1 to 65535; HOST 127.0.0.1 if left out)"


@dataclass(frozen=True)
class ServeAddress:
    host: str
    port: int
    source: str  # where it was set, for an error line: "--metrics-address", "inv.toml [metrics] serve"


def chosen_address(option: str | None, off: bool, inventory_value: str | None,
                   inventory_file: str) -> ServeAddress | None:
    """Where this run serves its figures: `option` (``--metrics-address``), else the
    inventory's ``[metrics] serve`` (checked when the inventory was loaded); None with
    `off` (``--no-metrics``) or neither. LoadtowerError (one line) for a bad `option`."""
    if off:
        return None
    if option is not None:
        try:
            host, port = parse_serve_address(option)
        except ValueError as exc:
            raise LoadtowerError(f"--metrics-address: {exc}") from None
        return ServeAddress(host, port, "--metrics-address")
    if inventory_value is not None:
        host, port = parse_serve_address(inventory_value)
        return ServeAddress(host, port, f"[metrics] serve of {inventory_file}")
    return None


def serve_address_problem(text: str) -> str | None:
    """Why `text` is not ``[HOST:]PORT``, or None."""
    try:
        parse_serve_address(text)
    except ValueError as exc:
        return str(exc)
    return None


def parse_serve_address(text: str) -> tuple[str, int]:
    """(HOST, PORT) of ``[HOST:]PORT`` (``[V6]:PORT`` for an IPv6 address); ValueError
    with one line saying what is wrong."""
    bad = ValueError(f"invalid address {text!r}: expected {RULE}")
    if text.isascii() and text.isdigit():
        host, port = DEFAULT_HOST, text
    elif text.startswith("["):
        inner, sep, port = text[1:].partition("]:")
        if not sep or not _IPV6.fullmatch(inner):
            raise bad
        host = inner
    else:
        host, sep, port = text.rpartition(":")
        if not sep or not _HOST.fullmatch(host):
            raise bad
    if not (port.isascii() and port.isdigit() and len(port) <= 5 and 0 < int(port) < 65536):
        raise bad
    return host, int(port)


def url_of(host: str, port: int) -> str:
    """The metrics page's URL (an IPv6 address in brackets)."""
    where = f"[{host}]" if ":" in host else host
    return f"http://{where}:{port}/metrics"
