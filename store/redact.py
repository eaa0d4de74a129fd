"""Removing secrets from scenario and inventory text before it is stored."""

from __future__ import annotations

import re

MASK = "*****"
_SECRET_LINE = re.compile(
    r"""^(?P<key>\s*(?:-\s*)?["']?[\w.-]*(?:password|passwd|secret|token)[\w.-]*["']?\s*[:=]\s*)"""
    r"""(?P<value>\S.*?)\s*$""",
    re.IGNORECASE,
)
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-zA-Z][\w+.-]*://[^/\s:@]+:)[^@\s/]+@")


def mask_url_passwords(text: str) -> str:
    """`scheme://user:password@host` -> `scheme://user:*****@host`."""
    return _URL_PASSWORD.sub(rf"\g<head>{MASK}@", text) if "://" in text else text


def redact(text: str | None) -> str | None:
    """Replace the value of every `password`/`secret`/`token` key (YAML or TOML line), and
    the password of every `scheme://user:password@host` URL, by *****."""
    if text is None:
        return None
    lines = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        match = _SECRET_LINE.match(body)
        if match and match.group("value") not in ("|", ">", "{", "["):
            body = match.group("key") + MASK
        lines.append(mask_url_passwords(body) + ending)
    return "".join(lines)
