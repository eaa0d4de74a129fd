"""The DataStax C++ driver's C API (the copy acsylla ships) through ctypes.

acsylla links the driver into its extension module and exports its `cass_*` functions;
the native hot loop (`native_kernels.py`) calls them by address, and this module does
the rest: connect, prepare, bind values into statements, close, and name error codes
the way acsylla's exception classes are named.
"""

from __future__ import annotations

import ctypes
import functools
import types
import uuid
from collections.abc import Callable
from typing import Any

P = ctypes.c_void_p
_I, _U, _SZ, _I64 = ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_int64


class CassUuid(ctypes.Structure):
    _fields_ = [("time_and_version", ctypes.c_uint64), ("clock_seq_and_node", ctypes.c_uint64)]


_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "cass_cluster_new": (P, []),
    "cass_cluster_free": (None, [P]),
    "cass_cluster_set_contact_points": (_I, [P, ctypes.c_char_p]),
    "cass_cluster_set_port": (_I, [P, _I]),
    "cass_cluster_set_credentials": (None, [P, ctypes.c_char_p, ctypes.c_char_p]),
    "cass_cluster_set_num_threads_io": (_I, [P, _U]),
    "cass_cluster_set_core_connections_per_host": (_I, [P, _U]),
    "cass_cluster_set_token_aware_routing": (None, [P, _I]),
    "cass_cluster_set_request_timeout": (None, [P, _U]),
    "cass_cluster_set_connect_timeout": (None, [P, _U]),
    "cass_cluster_set_consistency": (_I, [P, _I]),
    "cass_cluster_set_coalesce_delay": (_I, [P, _I64]),
    "cass_cluster_set_load_balance_dc_aware": (_I, [P, ctypes.c_char_p, _U, _I]),
    "cass_cluster_set_ssl": (None, [P, P]),
    "cass_ssl_new": (P, []),
    "cass_ssl_free": (None, [P]),
    "cass_ssl_add_trusted_cert": (_I, [P, ctypes.c_char_p]),
    "cass_ssl_set_verify_flags": (None, [P, _I]),
    "cass_ssl_set_cert": (_I, [P, ctypes.c_char_p]),
    "cass_ssl_set_private_key": (_I, [P, ctypes.c_char_p, ctypes.c_char_p]),
    "cass_session_new": (P, []),
    "cass_session_free": (None, [P]),
    "cass_session_connect": (P, [P, P]),
    "cass_session_close": (P, [P]),
    "cass_session_prepare": (P, [P, ctypes.c_char_p]),
    "cass_future_wait_timed": (_I, [P, ctypes.c_uint64]),
    "cass_future_error_code": (_I, [P]),
    "cass_future_error_message": (None, [P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_SZ)]),
    "cass_future_get_prepared": (P, [P]),
    "cass_future_free": (None, [P]),
    "cass_prepared_free": (None, [P]),
    "cass_prepared_bind": (P, [P]),
    "cass_prepared_parameter_data_type": (P, [P, _SZ]),
    "cass_data_type_type": (_I, [P]),
    "cass_statement_free": (None, [P]),
    "cass_statement_bind_string_n": (_I, [P, _SZ, ctypes.c_char_p, _SZ]),
    "cass_statement_bind_int32": (_I, [P, _SZ, ctypes.c_int32]),
    "cass_statement_bind_int64": (_I, [P, _SZ, _I64]),
    "cass_statement_bind_float": (_I, [P, _SZ, ctypes.c_float]),
    "cass_statement_bind_double": (_I, [P, _SZ, ctypes.c_double]),
    "cass_statement_bind_uuid": (_I, [P, _SZ, CassUuid]),
    "cass_uuid_from_string": (_I, [ctypes.c_char_p, ctypes.POINTER(CassUuid)]),
    "cass_batch_new": (P, [_I]),
    "cass_batch_free": (None, [P]),
    "cass_batch_add_statement": (_I, [P, P]),
    "cass_session_execute": (P, [P, P]),
    "cass_session_execute_batch": (P, [P, P]),
    "cass_future_set_callback": (_I, [P, P, P]),
}

# CassValueType codes (the CQL protocol's option ids) this module can bind
TEXT_TYPES = {0x0001, 0x000A, 0x000D}  # ascii, text, varchar
BIGINT, INT, FLOAT, DOUBLE, UUID, TIMEUUID = 0x0002, 0x0009, 0x0008, 0x0007, 0x000C, 0x000F
BATCH_UNLOGGED = 1
# CassSslVerifyFlags: the chain, and the node's IP address in the certificate
SSL_VERIFY_PEER_CERT, SSL_VERIFY_PEER_IDENTITY = 0x01, 0x02
CONSISTENCY = {
    "ANY": 0, "ONE": 1, "TWO": 2, "THREE": 3, "QUORUM": 4, "ALL": 5, "LOCAL_QUORUM": 6,
    "EACH_QUORUM": 7, "SERIAL": 8, "LOCAL_SERIAL": 9, "LOCAL_ONE": 10,
}  # fmt: skip

_LIB_ERRORS = (
    "BadParams NoStreams UnableToInit MessageEncode HostResolution UnexpectedResponse "
    "RequestQueueFull NoAvailableIoThread WriteError NoHostsAvailable IndexOutOfBounds "
    "InvalidItemCount InvalidValueType RequestTimedOut UnableToSetKeyspace "
    "CallbackAlreadySet InvalidStatementType NameDoesNotExist UnableToDetermineProtocol "
    "NullValue NotImplemented UnableToConnect UnableToClose NoPagingState ParameterUnset "
    "InvalidErrorResultType InvalidFutureType InternalError InvalidCustomType InvalidData "
    "NotEnoughData InvalidState NoCustomPayload ExecutionProfileInvalid NoTracingId"
).split()
_SERVER_ERRORS = {
    0x0000: "ServerError", 0x000A: "ProtocolError", 0x0100: "BadCredentials",
    0x1000: "Unavailable", 0x1001: "Overloaded", 0x1002: "IsBootstrapping",
    0x1003: "TruncateError", 0x1100: "WriteTimeout", 0x1200: "ReadTimeout",
    0x1300: "ReadFailure", 0x1400: "FunctionFailure", 0x1500: "WriteFailure",
    0x2000: "SyntaxError", 0x2100: "Unauthorized", 0x2200: "InvalidQuery",
    0x2300: "ConfigError", 0x2400: "AlreadyExists", 0x2500: "Unprepared",
}  # fmt: skip


def error_name(code: int) -> str:
    """acsylla's exception class name for a CassError code (CassErrorServerReadTimeout...)."""
    source, value = code >> 24, code & 0xFFFFFF
    if source == 1 and 1 <= value <= len(_LIB_ERRORS):
        return f"CassErrorLib{_LIB_ERRORS[value - 1]}"
    if source == 2 and value in _SERVER_ERRORS:
        return f"CassErrorServer{_SERVER_ERRORS[value]}"
    return f"CassError0x{code:06X}"


class NativeError(Exception):
    """A driver call that failed: the message names the call and the driver's reason."""


# calls that may block (waits, close) release the GIL; all others are a few hundred
# nanoseconds of work and keep it (a release and re-acquire would cost more)
_BLOCKING = {"cass_future_wait_timed", "cass_session_close", "cass_session_free",
             "cass_cluster_free"}


@functools.cache
def library() -> Any:
    """The driver's functions, each with its signature (a namespace of ctypes functions)."""
    from acsylla._cython import cyacsylla

    released, kept = ctypes.CDLL(cyacsylla.__file__), ctypes.PyDLL(cyacsylla.__file__)
    lib = types.SimpleNamespace()
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(released if name in _BLOCKING else kept, name)
        fn.restype, fn.argtypes = restype, argtypes
        setattr(lib, name, fn)
    return lib


def address(name: str) -> int:
    return ctypes.cast(getattr(library(), name), ctypes.c_void_p).value or 0


def ssl_options(tls: Any) -> int:
    """A CassSsl for ``tls`` (agents/cql/tls.py TlsOptions): the CA, the client
    certificate and key, the chain verified and, with verify_hostname, the node's IP."""
    lib = library()
    ssl = lib.cass_ssl_new()
    try:
        _check(lib.cass_ssl_add_trusted_cert(ssl, tls.ca_pem.encode()), "the TLS CA")
        if tls.cert_pem and tls.key_pem:
            _check(lib.cass_ssl_set_cert(ssl, tls.cert_pem.encode()), "the client certificate")
            _check(lib.cass_ssl_set_private_key(ssl, tls.key_pem.encode(), b""),
                   "the client key")
        flags = SSL_VERIFY_PEER_CERT | (SSL_VERIFY_PEER_IDENTITY if tls.verify_hostname else 0)
        lib.cass_ssl_set_verify_flags(ssl, flags)
    except NativeError:
        lib.cass_ssl_free(ssl)
        raise
    return int(ssl)


def wait(future: int, what: str, timeout_s: float) -> None:
    """Wait for a future; raise NativeError naming `what` if it failed or timed out."""
    lib = library()
    try:
        if not lib.cass_future_wait_timed(future, int(timeout_s * 1e6)):
            raise NativeError(f"{what}: no answer within {timeout_s:.0f}s")
        code = lib.cass_future_error_code(future)
        if code:
            text, size = ctypes.c_char_p(), ctypes.c_size_t()
            lib.cass_future_error_message(future, ctypes.byref(text), ctypes.byref(size))
            message = (text.value or b"")[: size.value].decode(errors="replace")
            raise NativeError(f"{what}: {error_name(code)}: {message}")
    except NativeError:
        lib.cass_future_free(future)
        raise


def _check(code: int, what: str) -> None:
    if code:
        raise NativeError(f"{what}: {error_name(code)}")


def cass_uuid(value: uuid.UUID) -> CassUuid:
    """The driver's CassUuid: time_low | time_mid << 32 | time_hi_and_version << 48, and
    the clock sequence and node as one big-endian word (what cass_uuid_from_string makes)."""
    high, low = value.int >> 64, value.int & ((1 << 64) - 1)
    time_and_version = (high >> 32) | ((high >> 16) & 0xFFFF) << 32 | (high & 0xFFFF) << 48
    return CassUuid(time_and_version, low)


def _binder(lib: Any, kind: int) -> Callable[[int, int, Any], int]:
    if kind in TEXT_TYPES:
        def text(stmt: int, i: int, v: Any) -> int:
            b = v.encode() if isinstance(v, str) else bytes(v)
            return lib.cass_statement_bind_string_n(stmt, i, b, len(b))
        return text
    simple = {BIGINT: lib.cass_statement_bind_int64, INT: lib.cass_statement_bind_int32,
              FLOAT: lib.cass_statement_bind_float, DOUBLE: lib.cass_statement_bind_double}
    if kind in simple:
        return simple[kind]
    if kind in (UUID, TIMEUUID):
        return lambda stmt, i, v: lib.cass_statement_bind_uuid(stmt, i, cass_uuid(v))
    raise NativeError(f"the native path cannot bind CQL value type 0x{kind:04X}")


class Prepared:
    """A prepared statement and one binder per parameter, by the parameter's CQL type."""

    def __init__(self, name: str, pointer: int, count: int) -> None:
        lib = self.lib = library()
        self.name, self.pointer = name, pointer
        self.binders = [
            _binder(lib, lib.cass_data_type_type(lib.cass_prepared_parameter_data_type(pointer, i)))
            for i in range(count)
        ]

    def bind(self, params: tuple) -> int:
        lib = self.lib
        stmt = lib.cass_prepared_bind(self.pointer)
        for i, (bind, value) in enumerate(zip(self.binders, params, strict=True)):
            code = bind(stmt, i, value)
            if code:
                lib.cass_statement_free(stmt)
                raise NativeError(f"binding parameter {i} of '{self.name}': {error_name(code)}")
        return int(stmt)
