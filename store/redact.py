"""Removing secrets from scenario and inventory text before it is stored.

The value of every key whose name contains password, passwd, secret or token becomes
*****, in TOML and YAML alike:
- `password = "x"`, `password: x`, `db.password = 'x'`, `- secret: x`;
- inside inline tables and flow mappings: `db = { user = "u", password = "x" }`;
- multi-line values, all their lines: TOML triple-quoted strings, YAML block scalars
  (`password: |` and the indented lines under it), arrays and tables spanning lines;
- and the password of every `scheme://user:password@host` URL;
- comments too: `# password = "x"` (a key commented out) and `user = "u"  # token: x`;
- secrets inside commands (node action templates): the word after `-pw`, `--password`,
  `--passwd`, `--pass`, `-pwd`, `--secret`, `--token` or `--auth-token` (or after
  `--password=`), and `NAME=value` where NAME holds password/passwd/secret/token
  (`PGPASSWORD=x psql`). `command_secrets` returns those values, so that the writer
  masks them wherever they appear (events, logs, reasons: StoreWriter.secrets).
  `-p` is not read as a password (it is a port for nodetool).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MASK = "*****"
_KEY = r"""["']?[\w.-]*(?:password|passwd|secret|token)[\w.-]*["']?"""
_SECRET_LINE = re.compile(
    rf"""^(?P<key>\s*(?:-\s*)?{_KEY}\s*[:=]\s*)(?P<value>\S.*?)\s*$""", re.IGNORECASE
)
# key = value inside an inline table / flow mapping / array (or at a line's start)
_INLINE = re.compile(
    rf"""(?P<key>(?:^|[{{,\[])\s*{_KEY}\s*[:=]\s*)"""
    r"""(?P<value>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s,}\]"'][^,}\]]*?)(?=\s*(?:[,}\]]|$))""",
    re.IGNORECASE,
)
_BLOCK_SCALAR = re.compile(r"^[|>][-+0-9]*\s*(?:#.*)?$")
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-zA-Z][\w+.-]*://[^/\s:@]+:)[^@\s/]+@")
_CLOSERS = {"[": "]", "{": "}"}
_WORD = r"""(?P<value>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"'`;|&)]+)"""
_FLAG_SECRET = re.compile(
    r"(?P<key>(?<![\w-])(?:-pw|-pwd|--password|--passwd|--pass|--secret|--token|--auth-token)"
    r"(?:\s+|=))" + _WORD
)
_ENV_SECRET = re.compile(
    r"(?P<key>(?<![\w.-])\w*(?:password|passwd|secret|token)\w*=)" + _WORD,
    re.IGNORECASE,
)
_COMMENT_SECRET = re.compile(rf"(?P<key>{_KEY}\s*[:=]\s*)" + _WORD, re.IGNORECASE)


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'":
        return word[1:-1]
    return word


def command_secrets(command: str) -> list[str]:
    """The secret values written in a command (see the module's doc), unquoted."""
    found = [m.group("value") for p in (_FLAG_SECRET, _ENV_SECRET) for m in p.finditer(command)]
    found += [m.group(0).split(":", 2)[-1][:-1] for m in _URL_PASSWORD.finditer(command)]
    values = (_unquote(w) for w in found)
    return [v for v in values if v and not (v.startswith("{") and v.endswith("}"))]


def mask_command_secrets(text: str) -> str:
    """`text` with the secrets of commands in it (see command_secrets) masked."""
    if "-p" in text or "--" in text:
        text = _FLAG_SECRET.sub(lambda m: m.group("key") + MASK, text)
    if "=" in text:
        text = _ENV_SECRET.sub(lambda m: m.group("key") + MASK, text)
    return text


def _unquoted(text: str) -> Iterator[tuple[int, str]]:
    """(index, character) of `text`'s characters outside TOML quoted strings."""
    quote = ""
    escaped = False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        else:
            yield i, ch


def _comment_start(line: str) -> int:
    """Where a line's `#` comment starts (outside quoted strings), or -1."""
    return next((i for i, ch in _unquoted(line) if ch == "#"), -1)


def _mask_comment(line: str) -> str:
    start = _comment_start(line)
    if start < 0:
        return line
    comment = _COMMENT_SECRET.sub(lambda m: m.group("key") + MASK, line[start:])
    return line[:start] + mask_command_secrets(comment)


def mask_url_passwords(text: str) -> str:
    """`scheme://user:password@host` -> `scheme://user:*****@host`."""
    return _URL_PASSWORD.sub(rf"\g<head>{MASK}@", text) if "://" in text else text


def _mask_inline(body: str) -> str:
    return _INLINE.sub(lambda m: m.group("key") + MASK, body)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t-"))


def _open_brackets(text: str, depth: int = 0) -> int:
    """Bracket depth after `text` (quoted strings skipped), starting from `depth`."""
    for _i, ch in _unquoted(text):
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "#":
            break
    return depth


def _value_lines(value: str, key_line: str, rest: list[str]) -> int:
    """How many of the following lines `rest` belong to a secret `value` that starts on
    `key_line` (0 when the value ends on its own line)."""
    for delim in ('"""', "'''"):
        if value.startswith(delim):
            if delim in value[3:]:
                return 0
            for n, line in enumerate(rest, 1):
                if delim in line:
                    return n
            return len(rest)
    if _BLOCK_SCALAR.match(value):
        own = _indent(key_line)
        n = 0
        for line in rest:
            if line.strip() and _indent(line) <= own:
                break
            n += 1
        while n and not rest[n - 1].strip():  # trailing blank lines are not the value's
            n -= 1
        return n
    if value[0] in _CLOSERS:
        depth = _open_brackets(value)
        n = 0
        while depth > 0 and n < len(rest):
            depth = _open_brackets(rest[n], depth)
            n += 1
        return n
    return 0


def redact(text: str | None) -> str | None:
    """`text` with every secret value (see the module's doc) replaced by *****."""
    if text is None:
        return None
    lines = text.splitlines(keepends=True)
    bodies = [line.rstrip("\r\n") for line in lines]
    out = []
    i = 0
    while i < len(lines):
        body, ending = bodies[i], lines[i][len(bodies[i]) :]
        match = _SECRET_LINE.match(body)
        if match:
            skip = _value_lines(match.group("value"), body, bodies[i + 1 :])
            body = match.group("key") + MASK
            if skip:  # the value's other lines go; the line after them keeps its ending
                ending = lines[i + skip][len(bodies[i + skip]) :]
            i += skip
        else:
            body = _mask_comment(mask_command_secrets(_mask_inline(body)))
        out.append(mask_url_passwords(body) + ending)
        i += 1
    return "".join(out)
