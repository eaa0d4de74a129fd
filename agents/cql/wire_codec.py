"""CQL native protocol v4, the parts loadtower's own sender needs (pure Python, no I/O).

Frames, the handshake (STARTUP, SASL PLAIN), QUERY, PREPARE, EXECUTE and BATCH bodies,
values by CQL type, and the answers: ERROR, Prepared metadata (parameter types and
partition-key indexes) and Rows (for the system tables). The spec:
https://github.com/apache/cassandra/blob/trunk/doc/native_protocol_v4.spec
"""

from __future__ import annotations

import builtins
import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

VERSION = 0x04
HEADER = struct.Struct(">BBhBi")  # version, flags, stream, opcode, body length
HEADER_LEN = HEADER.size
ERROR, STARTUP, READY, AUTHENTICATE = 0x00, 0x01, 0x02, 0x03
QUERY, RESULT, PREPARE, EXECUTE, BATCH = 0x07, 0x08, 0x09, 0x0A, 0x0D
AUTH_RESPONSE, AUTH_SUCCESS = 0x0F, 0x10
RESULT_ROWS, RESULT_PREPARED = 0x0002, 0x0004
UNLOGGED = 1
SKIP_METADATA, VALUES = 0x02, 0x01

CONSISTENCY = {
    "ANY": 0, "ONE": 1, "TWO": 2, "THREE": 3, "QUORUM": 4, "ALL": 5, "LOCAL_QUORUM": 6,
    "EACH_QUORUM": 7, "SERIAL": 8, "LOCAL_SERIAL": 9, "LOCAL_ONE": 10,
}  # fmt: skip
ASCII, BIGINT, BLOB, BOOLEAN, COUNTER, DOUBLE, FLOAT, INT = 1, 2, 3, 4, 5, 7, 8, 9
TIMESTAMP, UUID, VARCHAR, TIMEUUID, INET = 0x0B, 0x0C, 0x0D, 0x0F, 0x10
LIST, MAP, SET, UDT, TUPLE = 0x20, 0x21, 0x22, 0x30, 0x31


class ProtocolError(Exception):
    """An answer loadtower cannot read, or a value it cannot write."""


class ServerError(Exception):
    """An ERROR frame: the node's error code and message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"error 0x{code:04X}: {message}")
        self.code, self.message = code, message


# -- writing -----------------------------------------------------------------------------
def frame(opcode: int, body: bytes, stream: int = 0) -> bytes:
    return HEADER.pack(VERSION, 0, stream, opcode, len(body)) + body


def string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">H", len(b)) + b


def long_string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">i", len(b)) + b


def startup() -> bytes:
    return struct.pack(">H", 1) + string("CQL_VERSION") + string("3.0.0")


def auth_response(username: str, password: str) -> bytes:
    token = b"\0" + username.encode() + b"\0" + password.encode()
    return struct.pack(">i", len(token)) + token


def query(cql: str, consistency: int = 1) -> bytes:
    return long_string(cql) + struct.pack(">HB", consistency, 0)


def prepare(cql: str) -> bytes:
    return long_string(cql)


def _text(v: Any) -> bytes:
    return v.encode() if isinstance(v, str) else bytes(v)


def _uuid(v: Any) -> bytes:
    return (v if isinstance(v, uuid.UUID) else uuid.UUID(str(v))).bytes


_ENCODERS: dict[int, Callable[[Any], bytes]] = {
    ASCII: _text, VARCHAR: _text, BLOB: bytes,
    BIGINT: struct.Struct(">q").pack, COUNTER: struct.Struct(">q").pack,
    TIMESTAMP: struct.Struct(">q").pack, INT: struct.Struct(">i").pack,
    DOUBLE: struct.Struct(">d").pack, FLOAT: struct.Struct(">f").pack,
    BOOLEAN: lambda v: b"\x01" if v else b"\x00", UUID: _uuid, TIMEUUID: _uuid,
}  # fmt: skip


def encoder(type_id: int) -> Callable[[Any], bytes]:
    """The serializer of one CQL type (the types loadtower's workloads bind)."""
    try:
        return _ENCODERS[type_id]
    except KeyError:
        raise ProtocolError(f"the wire sender cannot bind CQL type 0x{type_id:04X}") from None


# -- reading -----------------------------------------------------------------------------
class Reader:
    """A cursor over one frame body."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = memoryview(data), 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise ProtocolError("a frame body ended early")
        out = bytes(self.data[self.at : self.at + n])
        self.at += n
        return out

    def int(self) -> builtins.int:
        return struct.unpack(">i", self.take(4))[0]

    def short(self) -> builtins.int:
        return struct.unpack(">H", self.take(2))[0]

    def string(self) -> str:
        return self.take(self.short()).decode()

    def bytes(self) -> builtins.bytes | None:
        n = self.int()
        return None if n < 0 else self.take(n)

    def short_bytes(self) -> builtins.bytes:
        return self.take(self.short())

    def option(self) -> tuple:
        """A type: (id,) or (id, inner types...) for collections, UDTs and tuples."""
        kind = self.short()
        if kind == 0:
            return (kind, self.string())
        if kind in (LIST, SET):
            return (kind, self.option())
        if kind == MAP:
            return (kind, self.option(), self.option())
        if kind == UDT:
            self.string(), self.string()
            return (kind, *[(self.string(), self.option())[1] for _ in range(self.short())])
        if kind == TUPLE:
            return (kind, *[self.option() for _ in range(self.short())])
        return (kind,)


TRACING, CUSTOM_PAYLOAD, WARNING = 0x02, 0x04, 0x08


def strip_flags(flags: int, body: bytes) -> bytes:
    """The body without what the header's flags put before it (tracing id, warnings,
    custom payload)."""
    r = Reader(body)
    if flags & TRACING:
        r.take(16)
    if flags & WARNING:
        for _ in range(r.short()):
            r.string()
    if flags & CUSTOM_PAYLOAD:
        for _ in range(r.short()):
            r.string(), r.bytes()
    return body[r.at :]


def read_error(body: bytes) -> ServerError:
    r = Reader(body)
    return ServerError(r.int(), r.string())


def _columns(r: Reader, flags: int, count: int) -> list[tuple[str, tuple]]:
    if flags & 0x0001:  # one keyspace and table for all columns
        r.string(), r.string()
    cols = []
    for _ in range(count):
        if not flags & 0x0001:
            r.string(), r.string()
        cols.append((r.string(), r.option()))
    return cols


@dataclass(frozen=True)
class PreparedInfo:
    id: bytes
    types: list[int]  # each parameter's CQL type id
    pk_indexes: list[int]  # the parameters that make the partition key, in key order


def read_prepared(body: bytes) -> PreparedInfo:
    r = Reader(body)
    if r.int() != RESULT_PREPARED:
        raise ProtocolError("PREPARE was not answered with a Prepared result")
    stmt_id = r.short_bytes()
    flags, count, pk_count = r.int(), r.int(), r.int()
    pk = [r.short() for _ in range(pk_count)]
    cols = _columns(r, flags, count)
    return PreparedInfo(stmt_id, [opt[0] for _, opt in cols], pk)


def _decode(opt: tuple, raw: bytes | None) -> Any:
    if raw is None:
        return None
    kind = opt[0]
    if kind in (ASCII, VARCHAR):
        return raw.decode()
    if kind == BIGINT:
        return struct.unpack(">q", raw)[0]
    if kind == INT:
        return struct.unpack(">i", raw)[0]
    if kind == INET:
        import ipaddress

        return str(ipaddress.ip_address(raw))
    if kind in (UUID, TIMEUUID):
        return uuid.UUID(bytes=raw)
    if kind in (LIST, SET):
        r = Reader(raw)
        return [_decode(opt[1], r.bytes()) for _ in range(r.int())]
    return raw


def read_rows(body: bytes) -> list[dict[str, Any]]:
    """A Rows result as dicts (text, ints, inet, uuid, lists and sets of those)."""
    r = Reader(body)
    if r.int() != RESULT_ROWS:
        raise ProtocolError("a query was not answered with rows")
    flags, count = r.int(), r.int()
    if flags & 0x0002:
        r.bytes()  # paging state: the system tables fit one page
    cols = _columns(r, flags, count) if not flags & 0x0004 else []
    return [{name: _decode(opt, r.bytes()) for name, opt in cols} for _ in range(r.int())]


_LEN = struct.Struct(">i").pack


class Statement:
    """A prepared statement's EXECUTE and BATCH encodings, and its routing key."""

    def __init__(self, name: str, info: PreparedInfo, consistency: int) -> None:
        self.name, self.info = name, info
        self.encoders = [encoder(t) for t in info.types]
        self.id_part = struct.pack(">H", len(info.id)) + info.id
        self.execute_head = self.id_part + struct.pack(
            ">HBH", consistency, VALUES | SKIP_METADATA, len(info.types))
        self.count_part = struct.pack(">H", len(info.types))
        self.pk = info.pk_indexes

    def values(self, params: tuple) -> list[bytes]:
        if len(params) != len(self.encoders):
            raise ProtocolError(f"'{self.name}' takes {len(self.encoders)} values, "
                                f"got {len(params)}")
        out = []
        for enc, v in zip(self.encoders, params, strict=True):
            b = enc(v)
            out.append(_LEN(len(b)) + b)
        return out

    def routing_key(self, values: list[bytes]) -> bytes:
        """The partition key as the partitioner hashes it (composite: length, bytes, 0)."""
        if len(self.pk) == 1:
            return values[self.pk[0]][4:]
        return b"".join(struct.pack(">H", len(values[i]) - 4) + values[i][4:] + b"\0"
                        for i in self.pk)

    def execute(self, params: tuple) -> tuple[bytes, bytes]:
        """(an EXECUTE frame with stream 0, the routing key)."""
        values = self.values(params)
        body = self.execute_head + b"".join(values)
        return frame(EXECUTE, body), self.routing_key(values) if self.pk else b""

    def batch(self, rows: list[tuple], consistency: int) -> tuple[bytes, bytes]:
        """(an unlogged BATCH frame of one row per entry, the first row's routing key)."""
        parts = [struct.pack(">BH", UNLOGGED, len(rows))]
        first: list[bytes] | None = None
        for row in rows:
            values = self.values(row)
            first = first or values
            parts += [b"\x01", self.id_part, self.count_part, *values]
        parts.append(struct.pack(">HB", consistency, 0))
        key = self.routing_key(first) if first and self.pk else b""
        return frame(BATCH, b"".join(parts)), key
