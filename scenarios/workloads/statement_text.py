"""The parts of a statement: text, parameters and ``${...}`` references.

Parameters are written ``:name`` in every SQL dialect's statements (a dialect with
``native_params`` also takes its own ``{name:Type}``); ``:[a, b]`` is the list of (a, b) over the op's batch rows;
``:g*`` is the parameters of a column group's members (g0, g1, ...). A ``:`` inside a
quoted string, a quoted name, a comment, or ``::`` (a cast) is text.
``${name}`` names a table of the file, ``${keyspace}``, ``${final}``, or a column group
(``${g*}``: its members; ``${g#}``: the member the op picked; ``${g*|:p}``: the members
with the picked one replaced by parameter p).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NATIVE = re.compile(r"\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}")
_LIST = re.compile(r":\[\s*([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)\s*\]")
_REF = re.compile(r"\$\{([^{}]*)\}")
_QUOTES = {"'": "'", '"': '"', "`": "`"}


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Param:
    name: str
    group: bool = False  # ":g*": every member of group g


@dataclass(frozen=True)
class ParamList:
    names: tuple[str, ...]


@dataclass(frozen=True)
class Native:
    """A dialect's own typed parameter, ``{name:Type}`` (``native_params``)."""

    name: str
    type: str


@dataclass(frozen=True)
class Ref:
    body: str  # what is between ${ and }


Part = Text | Param | ParamList | Native | Ref


def _skip_quoted(s: str, i: int) -> int:
    """The index after the quoted string starting at s[i] (a doubled quote or a
    backslash escapes one)."""
    quote = s[i]
    j = i + 1
    while j < len(s):
        if s[j] == "\\":
            j += 2
            continue
        if s[j] == quote:
            if j + 1 < len(s) and s[j + 1] == quote:
                j += 2
                continue
            return j + 1
        j += 1
    return len(s)


def parts(statement: str, native_params: bool = False) -> list[Part]:
    out: list[Part] = []
    text: list[str] = []
    s, i = statement, 0

    def flush() -> None:
        if text:
            out.append(Text("".join(text)))
            text.clear()

    while i < len(s):
        c = s[i]
        if c in _QUOTES:
            end = _skip_quoted(s, i)
            text.append(s[i:end])
            i = end
        elif s.startswith("--", i) or s.startswith("//", i):
            end = s.find("\n", i)
            end = len(s) if end < 0 else end
            text.append(s[i:end])
            i = end
        elif s.startswith("/*", i):
            end = s.find("*/", i + 2)
            end = len(s) if end < 0 else end + 2
            text.append(s[i:end])
            i = end
        elif s.startswith("$$", i):
            end = s.find("$$", i + 2)
            end = len(s) if end < 0 else end + 2
            text.append(s[i:end])
            i = end
        elif s.startswith("${", i) and (m := _REF.match(s, i)):
            flush()
            out.append(Ref(m.group(1).strip()))
            i = m.end()
        elif s.startswith("::", i):
            text.append("::")
            i += 2
        elif c == ":" and (m := _LIST.match(s, i)):
            flush()
            out.append(ParamList(tuple(n.strip() for n in m.group(1).split(","))))
            i = m.end()
        elif c == ":" and (m := _IDENT.match(s, i + 1)) and not _after_word(s, i):
            flush()
            group = s.startswith("*", m.end())
            out.append(Param(m.group(0), group))
            i = m.end() + (1 if group else 0)
        elif native_params and c == "{" and (m := _NATIVE.match(s, i)):
            flush()
            out.append(Native(m.group(1), m.group(2)))
            i = m.end()
        else:
            text.append(c)
            i += 1
    flush()
    return out


def _after_word(s: str, i: int) -> bool:
    """A ':' right after a name or number (``a:b``) is not a parameter."""
    return i > 0 and (s[i - 1].isalnum() or s[i - 1] == "_")


def param_names(items: list[Part], groups: dict[str, list[str]]) -> list[str]:
    """The names of the parameters, in order of first use (groups expanded)."""
    seen: dict[str, None] = {}
    for part in items:
        if isinstance(part, Param) and part.group:
            for member in groups.get(part.name, []):
                seen.setdefault(member)
        elif isinstance(part, Param | Native):
            seen.setdefault(part.name)
        elif isinstance(part, ParamList):
            for name in part.names:
                seen.setdefault(name)
        elif isinstance(part, Ref) and "|" in part.body:
            seen.setdefault(part.body.split("|", 1)[1].strip().removeprefix(":"))
    return list(seen)
