"""Find the line on which a key path is written in a TOML file.

`tomllib` gives values without positions, so this scanner maps dotted key paths
(with array-of-table indexes) to 1-based line numbers for error messages.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(
    r'^\s*((?:"[^"]*"|\'[^\']*\'|[A-Za-z0-9_\-]+)(?:\s*\.\s*(?:"[^"]*"|\'[^\']*\'|[A-Za-z0-9_\-]+))*)\s*='
)
_INLINE_KEY = re.compile(r'(?:[{,]\s*)("[^"]*"|[A-Za-z0-9_\-]+)\s*=')

Path = tuple[str | int, ...]


def _split_dotted(text: str) -> list[str]:
    parts = re.findall(r'"[^"]*"|\'[^\']*\'|[^.\s]+', text)
    return [p.strip("\"'") for p in parts]


class LineIndex:
    """Maps key paths like ("phases", 1, "duration") to the line that defines them."""

    def __init__(self, source: str) -> None:
        self.lines: dict[Path, int] = {}
        self._scan(source)

    def _record(self, path: Path, line: int) -> None:
        for i in range(1, len(path) + 1):
            self.lines.setdefault(path[:i], line)

    def _scan(self, source: str) -> None:
        table: Path = ()
        array_counts: dict[Path, int] = {}
        for number, raw in enumerate(source.splitlines(), start=1):
            header = _HEADER.match(raw)
            if header:
                parts = tuple(_split_dotted(header.group(2)))
                if header.group(1) == "[[":
                    index = array_counts.get(parts, -1) + 1
                    array_counts[parts] = index
                    table = (*parts, index)
                else:
                    table = self._resolve_arrays(parts, array_counts)
                self.lines[table] = number
                self._record(table, number)
                continue
            key = _KEY.match(raw)
            if not key:
                continue
            path = (*table, *_split_dotted(key.group(1)))
            self._record(path, number)
            rest = raw[key.end() :]
            if "{" in rest:
                for inner in _INLINE_KEY.finditer(rest):
                    self._record((*path, inner.group(1).strip('"')), number)

    @staticmethod
    def _resolve_arrays(parts: tuple[str, ...], counts: dict[Path, int]) -> Path:
        """[phases.params] after [[phases]] belongs to the latest phases entry."""
        resolved: list[str | int] = []
        for i, part in enumerate(parts):
            resolved.append(part)
            prefix = parts[: i + 1]
            if prefix in counts and i < len(parts) - 1:
                resolved.append(counts[prefix])
        return tuple(resolved)

    def line_of(self, path: Path) -> int | None:
        """The line of the longest prefix of `path` that the file writes."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None


def format_path(path: Path) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out
