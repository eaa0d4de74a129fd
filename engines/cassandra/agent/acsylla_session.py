"""The fast path: acsylla (asyncio over the C++ CQL driver).

Everything runs on the engine thread's asyncio loop; the C++ driver does the I/O on
its own threads, so an op costs one bind and one await on the Python side.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from loadtower.agents.tls import TlsOptions
from loadtower.engines.cassandra.agent.ddl_retry import ATTEMPT_S, with_retries

# the C++ driver's CassSslVerifyFlags (cassandra.h): the certificate, and the node's IP in it
SSL_VERIFY_PEER_CERT, SSL_VERIFY_PEER_IDENTITY = 0x01, 0x02


class _VerifyFlags(NamedTuple):
    """acsylla's SSLVerifyFlags lacks PEER_IDENTITY (the node's IP in its certificate)
    and passes on ``.value``: the C++ driver's flags as they are."""

    value: int


def tls_arguments(tls: TlsOptions | None) -> dict[str, Any]:
    if tls is None:
        return {}
    identity = SSL_VERIFY_PEER_IDENTITY if tls.verify_hostname else 0
    return {
        "ssl_enabled": True,
        "ssl_trusted_cert": tls.ca_pem,
        "ssl_cert": tls.cert_pem,
        "ssl_private_key": tls.key_pem,
        "ssl_verify_flags": _VerifyFlags(SSL_VERIFY_PEER_CERT | identity),
    }


class AcsyllaSession:
    name = "acsylla"

    def __init__(self) -> None:
        self.cluster: Any = None
        self.session: Any = None
        self.prepared: dict[str, Any] = {}
        self.consistency: Any = None

    async def connect(
        self,
        contact_points: list[str],
        port: int,
        username: str | None,
        password: str | None,
        consistency: str,
        io_threads: int = 1,
        tls: TlsOptions | None = None,
        local_dc: str | None = None,
    ) -> None:
        import acsylla

        self.consistency = getattr(acsylla.Consistency, consistency)
        self.cluster = acsylla.create_cluster(
            contact_points,
            port=port,
            username=username,
            password=password,
            consistency=self.consistency,
            connect_timeout=10.0,
            request_timeout=12.0,
            num_threads_io=io_threads,
            core_connections_per_host=1,
            token_aware_routing=True,
            log_level="critical",
            load_balance_dc_aware=local_dc,
            **tls_arguments(tls),
        )
        self.session = await self.cluster.create_session()

    async def ddl(self, statements: list[str]) -> None:
        import acsylla

        for cql in statements:
            await with_retries(lambda cql=cql: self.session.execute(  # type: ignore[misc]
                acsylla.create_statement(cql, timeout=ATTEMPT_S)))

    async def prepare(self, statements: dict[str, str]) -> None:
        for name, cql in statements.items():
            self.prepared[name] = await self.session.create_prepared(cql)

    def execute(self, name: str, params: tuple) -> Any:
        return self.session.execute(self.prepared[name].bind(list(params)))

    def batch(self, name: str, rows: list[tuple]) -> Any:
        import acsylla

        batch = acsylla.create_batch_unlogged()
        batch.set_consistency(self.consistency)
        prepared = self.prepared[name]
        for row in rows:
            batch.add_statement(prepared.bind(list(row)))
        return self.session.execute_batch(batch)

    async def scalar(self, cql: str) -> Any:
        import acsylla

        result = await self.session.execute(acsylla.create_statement(cql, timeout=60.0))
        row = result.first()
        return None if row is None else row.as_list()[0]

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
            self.session = None
