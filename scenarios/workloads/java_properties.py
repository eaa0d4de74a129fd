"""Java ``.properties`` syntax (what YCSB's workload files are): ``key=value``,
``key: value`` or ``key value``; comment lines start with ``#`` or ``!``; a line ending
in an odd number of backslashes continues on the next (its leading blanks dropped);
``\\t``, ``\\n``, ``\\uXXXX`` and ``\\`` before any other character are escapes."""

from __future__ import annotations

from dataclasses import dataclass

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


@dataclass(frozen=True)
class Property:
    key: str
    value: str
    line: int  # where its logical line starts


def _logical_lines(source: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(source.splitlines(), start=1):
        text = raw.lstrip(" \t\f") if pending else raw.lstrip(" \t\f")
        if not pending:
            if not text or text[0] in "#!":
                continue
            start = number
        trailing = len(text) - len(text.rstrip("\\"))
        if trailing % 2:
            pending.append(text[:-1])
            continue
        pending.append(text)
        out.append((start, "".join(pending)))
        pending = []
    if pending:
        out.append((start, "".join(pending)))
    return out


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 >= len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "u" and i + 6 <= len(text):
            try:
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            except ValueError:
                pass
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def _split(line: str) -> tuple[str, str]:
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    key, rest = line[:i], line[i:]
    rest = rest.lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return _unescape(key), _unescape(rest)


def parse_properties(source: str) -> list[Property]:
    """Every property in file order (a key given twice appears twice; the last wins)."""
    return [Property(*_split(text), line) for line, text in _logical_lines(source)]
