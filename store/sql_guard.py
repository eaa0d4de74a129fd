"""Which user SQL the store runs: one query, nothing that writes, reads files or reconfigures.

Two layers. This one refuses, with a clear message, every statement that is not a query
(SELECT, EXPLAIN of a query, PRAGMA other than IMPORT DATABASE). Under it, the read-only
connection itself (connection.py) has external access off and its configuration locked,
so a statement that gets past this check still cannot touch another file or a setting.
"""

from __future__ import annotations

import re

import duckdb

from loadtower.errors import LoadtowerError

READ_ONLY_STATEMENTS = {"SELECT", "EXPLAIN", "PRAGMA"}
_IMPORT_PRAGMA = re.compile(r"^\s*PRAGMA\s+import_database\b", re.IGNORECASE)
_EXPLAIN_HEAD_TOKENS = 12  # EXPLAIN [ANALYZE] [(option, ...)]: the inner query starts soon
_REFUSED = "the store is read-only here"


def refuse(what: str, allowed: bool = True) -> LoadtowerError:
    hint = " (only one SELECT, EXPLAIN [ANALYZE] of a SELECT, or PRAGMA query)" if allowed else ""
    return LoadtowerError(f"{_REFUSED}: {what}{hint}")


def _tokens(text: str) -> list[int]:
    """Start offsets of the tokens of `text`, comments left out."""
    comment = duckdb.token_type.comment
    return [pos for pos, kind in duckdb.tokenize(text) if kind != comment]


def explained_kind(con: duckdb.DuckDBPyConnection, text: str) -> str | None:
    """The statement type an EXPLAIN statement's text explains (None when not found).

    The inner statement is the first suffix, after the EXPLAIN keyword, that parses as one
    statement: the words before it (ANALYZE, a parenthesised option list) do not parse on
    their own, so nothing the EXPLAIN would run is skipped over.
    """
    for pos in _tokens(text)[1:_EXPLAIN_HEAD_TOKENS]:
        try:
            inner = con.extract_statements(text[pos:])
        except duckdb.Error:
            continue
        if len(inner) != 1:
            return None
        kind = inner[0].type.name
        return explained_kind(con, inner[0].query) if kind == "EXPLAIN" else kind
    return None


def check_query(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Raise LoadtowerError unless `query` is one statement the store runs for users."""
    try:
        statements = con.extract_statements(query)
    except duckdb.Error as exc:
        raise LoadtowerError(f"bad SQL: {exc}") from exc
    if len(statements) != 1:
        raise LoadtowerError("give exactly one SQL statement")
    statement = statements[0]
    kind = statement.type.name
    if kind not in READ_ONLY_STATEMENTS:
        raise refuse(f"{kind} statements are refused")
    if kind == "EXPLAIN":
        inner = explained_kind(con, statement.query)
        if inner != "SELECT":
            raise refuse(f"EXPLAIN of {inner or 'anything but a query'} is refused")
    if kind == "PRAGMA" and (
        _IMPORT_PRAGMA.match(statement.query) or _first_word(statement.query) == "IMPORT"
    ):
        raise refuse("IMPORT DATABASE is refused")


def _first_word(text: str) -> str:
    starts = _tokens(text)
    if not starts:
        return ""
    end = starts[1] if len(starts) > 1 else len(text)
    return text[starts[0] : end].strip().upper()


def explain_error(exc: duckdb.Error) -> LoadtowerError | None:
    """A clear one-line refusal for what the locked-down connection stopped, else None."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, duckdb.PermissionException):
        return refuse(f"reading or writing files, attaching databases and loading extensions "
                      f"are refused ({first})", allowed=False)  # fmt: skip
    if "configuration has been locked" in first:
        return refuse(f"settings cannot be changed ({first})", allowed=False)
    return None
