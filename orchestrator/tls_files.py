"""The inventory's TLS keys (`[ENGINE] tls_*_file`, engines whose kind has `tls_files`) as
the orchestrator uses them: for its own queries
(the engines' orchestrator hooks) and, as PEM contents, in the phase spec for the agents
(``connection.tls``; the agents cannot read the orchestrator's files).
"""

from __future__ import annotations

from typing import Any

from loadtower.agents.tls import TlsOptions
from loadtower.errors import LoadtowerError
from loadtower.protocol.engine_kinds import kind
from loadtower.scenarios.environment_checks import file_problem, tls_path
from loadtower.scenarios.plan import Plan

MAX_PEM_BYTES = 256 * 1024


def _read(plan: Plan, engine: str, key: str, value: str) -> tuple[str, str]:
    path = tls_path(value, str(plan.inventory_path))
    problem = file_problem(path)
    if problem is None:
        try:
            data = path.read_bytes()
            if len(data) > MAX_PEM_BYTES:
                problem = f"file {path} is larger than {MAX_PEM_BYTES // 1024} KiB"
            else:
                return data.decode("ascii"), str(path)
        except (OSError, UnicodeDecodeError) as exc:
            problem = f"cannot read {path}: {exc}"
    raise LoadtowerError(f"{plan.inventory_path}: [{engine}].{key}: {problem}")


def tls_options(plan: Plan, engine: str) -> TlsOptions | None:
    """The engine's TLS options (PEM contents read now), or None without ``tls``
    (the engines whose kind has ``tls_files`` have the TLS keys)."""
    if not kind(engine).tls_files:
        return None
    creds = plan.inventory.credentials(engine)
    if not creds.tls:
        return None
    assert creds.tls_ca_file is not None  # the model requires it with tls
    ca, ca_file = _read(plan, engine, "tls_ca_file", creds.tls_ca_file)
    cert = key = None
    if creds.tls_cert_file and creds.tls_key_file:
        cert, _ = _read(plan, engine, "tls_cert_file", creds.tls_cert_file)
        key, _ = _read(plan, engine, "tls_key_file", creds.tls_key_file)
    return TlsOptions(ca_pem=ca, cert_pem=cert, key_pem=key,
                      verify_hostname=creds.tls_verify_hostname, ca_file=ca_file)


def tls_spec(options: TlsOptions | None) -> dict[str, Any] | None:
    """The phase spec's ``connection.tls`` (protocol/phase_spec.py ``TlsSpec``)."""
    if options is None:
        return None
    return {
        "ca_pem": options.ca_pem,
        "cert_pem": options.cert_pem,
        "key_pem": options.key_pem,
        "verify_hostname": options.verify_hostname,
        "ca_file": options.ca_file,
    }


def host_names(plan: Plan) -> dict[str, str]:
    """address -> inventory host name, for lines that name a node."""
    return {h.address: name for name, h in plan.inventory.hosts.items()}
