"""Values the writer was handed that the store cannot take: found, repaired, reported.

An agent, a database or a scenario can hand the writer a string that is not UTF-8 (a
lone surrogate such as "bad \\udcff", from bytes decoded with surrogateescape) or a value
of the wrong type (text where a number belongs, an integer beyond 64 bits). Neither
Arrow nor DuckDB takes such a value, and one of them must not cost the rows around it.
So each column is built once as it is (the fast path); only a column that fails is gone
through value by value: a bad string is stored with its bad characters spelled out
(`\\udcff`), any other bad value as NULL, and each one becomes a `bad_sample` event that
names the table, the column and the value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

_F, _I, _S = pa.float64(), pa.int64(), pa.string()
TYPES: dict[str, list[pa.DataType]] = {
    "events": [_S, _F, _S, _S, _S, _S, _S],
    "logs": [_S, _F, _S, _S, _S],
    "node_samples": [_S, _F, _S, _F, _I, _I, _F, _F, _F, _F],
    "node_stats": [_S, _F, _S, _S, _S, _F],
    "agent_samples": [_S, _F, _S, _S, _F, _F, _S],
}
_BUILD_ERRORS = (pa.ArrowException, UnicodeError, TypeError, ValueError, OverflowError)
Bad = tuple[str, str]  # (run id, what was wrong: table.column, value, what was stored)


def encodable(text: str) -> bool:
    if text.isascii():  # a flag of the string (no copy): the HDR payloads, most text
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def repaired_text(text: str) -> str:
    """`text` with every character UTF-8 cannot hold spelled out (`\\udcff`)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _shown(value: Any) -> str:
    text = ascii(value)
    return text if len(text) <= 80 else text[:77] + "..."


def describe(place: str, value: Any, stored: Any, kind: pa.DataType = _S) -> str:
    """The bad_sample message: where, what was handed over, what was stored instead."""
    if isinstance(value, str) and kind == _S:
        what = "text that is not UTF-8"
    else:
        what = f"a {type(value).__name__} where a {kind} belongs"
    return f"{place}: {what} ({_shown(value)}) stored as {_shown(stored)}"


def _fits(value: Any, kind: pa.DataType) -> bool:
    try:
        pa.array([value], type=kind, from_pandas=True, safe=False)
    except _BUILD_ERRORS:
        return False
    return True


def _column(
    table: str, name: str, kind: pa.DataType, values: Sequence[Any], runs: Sequence[Any]
) -> tuple[pa.Array, list[Bad]]:
    try:
        return pa.array(values, type=kind, from_pandas=True, safe=False), []
    except _BUILD_ERRORS:
        pass
    fixed, bad = list(values), []
    for i, value in enumerate(values):
        if _fits(value, kind):
            continue
        stored = repaired_text(value) if isinstance(value, str) and kind == _S else None
        fixed[i] = stored
        run = runs[i] if isinstance(runs[i], str) and encodable(runs[i]) else "?"
        bad.append((run, describe(f"{table}.{name}", value, stored, kind)))
    return pa.array(fixed, type=kind, from_pandas=True, safe=False), bad


def build_table(table: str, names: list[str], rows: list[tuple[Any, ...]]) -> tuple[pa.Table, list[Bad]]:
    """`rows` as an Arrow table of the store's types, with every bad value repaired and
    reported (see the module doc). The run id is the first value of each row."""
    columns = list(zip(*rows, strict=True))
    arrays, bad = [], []
    for name, kind, values in zip(names, TYPES[table], columns, strict=True):
        array, wrong = _column(table, name, kind, values, columns[0])
        arrays.append(array)
        bad.extend(wrong)
    return pa.table(arrays, names=names), bad


def repaired_params(table: str, columns: list[str], params: list[Any]) -> tuple[list[Any], list[str]]:
    """Statement parameters with text that is not UTF-8 spelled out, and what was wrong."""
    fixed, bad = list(params), []
    for i, (column, value) in enumerate(zip(columns, params, strict=True)):
        if isinstance(value, str) and not encodable(value):
            fixed[i] = repaired_text(value)
            bad.append(describe(f"{table}.{column}", value, fixed[i]))
    return fixed, bad


def _clean(value: Any) -> bool:
    """Whether every string in `value` (nested dicts and lists, keys included) is UTF-8:
    a walk that builds nothing, for the lines that need no repair (nearly all of them)."""
    if isinstance(value, str):
        return value.isascii() or encodable(value)
    if isinstance(value, dict):
        for key, item in value.items():
            if not (_clean(key) and _clean(item)):
                return False
        return True
    if isinstance(value, list):
        return all(_clean(item) for item in value)
    return True


def repaired_line(line: Any) -> tuple[Any, list[str]]:
    """An interval line (nested dicts, lists, strings) with text that is not UTF-8 spelled
    out, keys included; the same object when nothing needed it."""
    if _clean(line):
        return line, []
    bad: list[str] = []

    def fix(value: Any, where: str) -> Any:
        if isinstance(value, str):
            if encodable(value):
                return value
            bad.append(describe(f"op_intervals line {where}", value, repaired_text(value)))
            return repaired_text(value)
        if isinstance(value, dict):
            out = {fix(k, where): fix(v, f"{where}.{ascii(k)}") for k, v in value.items()}
            return out if bad else value
        if isinstance(value, list):
            items = [fix(v, where) for v in value]
            return items if bad else value
        return value

    fixed = fix(line, "")
    return (fixed, bad) if bad else (line, [])
