"""One blocking CQL connection for the wire sender's set-up: handshake, PREPARE, queries
of the system tables. Once ready its socket is handed to the native loops, which then
own all traffic on it (streams >= 1; stream 0 is never used by them)."""

from __future__ import annotations

import bisect
import socket
import struct

from cassandra.murmur3 import murmur3

from loadtower.agents.cql import wire_codec as w
from loadtower.agents.cql.tls import TlsOptions, wrap

SEND_TIMEOUT_S = 2  # a send blocked this long means the node stopped reading: drop it


class WireConnError(Exception):
    """The connection could not be made ready; the message names the host and why."""


class Conn:
    """``tls``: a TLS connection (for the orchestrator's own queries only: the native
    loops own plain sockets) to the node ``server_name`` (default ``host``; its address
    as certified when ``host`` is a local forward to it); ``label`` (a host name) and
    ``where`` (the node's ``address:port``, default ``host:port``) name it in errors."""

    def __init__(self, host: str, port: int, timeout_s: float, tls: TlsOptions | None = None,
                 server_name: str | None = None, label: str = "",
                 where: str | None = None) -> None:
        self.host, self.port = host, port
        self.where = where or f"{host}:{port}"
        try:
            sock = socket.create_connection((host, port), timeout=timeout_s)
        except OSError as exc:
            raise WireConnError(f"connecting to {self.where}: {exc}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls is not None:
            sock = wrap(sock, tls, server_name or host, label, self.where)
        self.sock = sock

    def request(self, opcode: int, body: bytes) -> tuple[int, bytes]:
        """Send one request on stream 0 and wait for its answer (events are skipped)."""
        try:
            self.sock.sendall(w.frame(opcode, body))
            while True:
                _, flags, stream, op, length = w.HEADER.unpack(self._read(w.HEADER_LEN))
                answer = self._read(length)
                if stream == 0:
                    return op, w.strip_flags(flags, answer)
        except OSError as exc:
            raise WireConnError(f"talking to {self.where}: {exc}") from None

    def _read(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = self.sock.recv(left)
            if not chunk:
                raise WireConnError(f"{self.where} closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _expect(self, answer: tuple[int, bytes], what: str, opcode: int) -> bytes:
        op, body = answer
        if op == w.ERROR:
            err = w.read_error(body)
            raise WireConnError(f"{what} on {self.where}: {err.message} (0x{err.code:04X})")
        if op != opcode:
            raise WireConnError(f"{what} on {self.where}: unexpected answer 0x{op:02X}")
        return body

    def handshake(self, username: str | None, password: str | None) -> None:
        op, body = self.request(w.STARTUP, w.startup())
        if op == w.AUTHENTICATE:
            if not username:
                raise WireConnError(f"{self.where} asks for credentials and none were given")
            answer = self.request(w.AUTH_RESPONSE, w.auth_response(username, password or ""))
            self._expect(answer, "authenticating", w.AUTH_SUCCESS)
        else:
            self._expect((op, body), "starting up", w.READY)

    def prepare(self, cql: str) -> w.PreparedInfo:
        body = self._expect(self.request(w.PREPARE, w.prepare(cql)), f"preparing {cql!r}",
                            w.RESULT)
        return w.read_prepared(body)

    def rows(self, cql: str) -> list[dict]:
        body = self._expect(self.request(w.QUERY, w.query(cql)), f"querying {cql!r}", w.RESULT)
        return w.read_rows(body)

    def hand_over(self) -> int:
        """Blocking sends (bounded by SEND_TIMEOUT_S), reads by the native loop: its fd."""
        self.sock.settimeout(None)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                             struct.pack("ll", SEND_TIMEOUT_S, 0))
        return self.sock.fileno()

    def close(self) -> None:
        self.sock.close()


def topology(control: Conn, contact_points: list[str]) -> tuple[list[str], list[list[str]]]:
    """Every node's address (the control connection's first, then the other contact
    points and the peers) and its tokens, from the system tables."""
    local = control.rows("SELECT tokens FROM system.local")
    peers = control.rows("SELECT peer, rpc_address, tokens FROM system.peers")
    tokens = {control.host: (local[0]["tokens"] or []) if local else []}
    for row in peers:
        address = row["rpc_address"]
        if address in (None, "0.0.0.0", "::"):  # bound to any: the peer's own address
            address = row["peer"]
        tokens[address] = row["tokens"] or []
    hosts = list(dict.fromkeys([control.host, *contact_points, *tokens]))
    return hosts, [tokens.get(h, []) for h in hosts]


class Ring:
    """Murmur3 token ring: the node owning a routing key (the first token >= its token)."""

    def __init__(self, owners: dict[int, int]) -> None:
        self.tokens = sorted(owners)
        self.hosts = [owners[t] for t in self.tokens]

    @classmethod
    def from_tokens(cls, tokens: list[list[str]]) -> Ring:
        """The ring of hosts 0..n-1 from each one's tokens."""
        return cls({int(t): i for i, ts in enumerate(tokens) for t in ts})

    def host(self, key: bytes) -> int:
        if not self.tokens:
            return 0
        i = bisect.bisect_left(self.tokens, murmur3(key))
        return self.hosts[i if i < len(self.tokens) else 0]
