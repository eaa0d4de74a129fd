"""What a load worker sends the Locust master of an interval line (``lt_interval``): the
agent's name and the line as JSON text, the text its spool wrote. The master prints the
text as it came (issue 28: one encoding of a line on its way, not a msgpack decode then a
JSON re-encode in the one process every worker's lines go through); every other line
(``lt_line``) is a dict the master reads.

The text is one line of the master's stdout, which the orchestrator reads line by line:
a text that could be more than one line, or anything but a JSON object's text, is
refused (`text_problem`), never printed.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict


class IntervalMessage(TypedDict):
    agent: str  # HOST/INDEX: the master maps it to the worker's id, as for any line
    text: str  # the interval line's JSON text (protocol/lines.py IntervalLine), one line


def interval_message(agent: str, line: dict[str, Any], text: str | None = None
                     ) -> IntervalMessage:
    """The message of `line`; `text`: its JSON text when already made (the spool's)."""
    return {"agent": agent,
            "text": text if text is not None else json.dumps(line, separators=(",", ":"))}


def text_problem(message: object) -> str | None:
    """Why `message` is not an interval message the master may print; None when it is."""
    if not isinstance(message, dict):
        return f"an interval message is not a map: {type(message).__name__}"
    text, agent = message.get("text"), message.get("agent")
    if not isinstance(text, str) or not isinstance(agent, str):
        return "an interval message without its agent or text"
    if not (text.startswith('{"') and text.endswith("}")):
        return f"agent {agent}: an interval line that is not a JSON object's text"
    if "\n" in text or "\r" in text:
        return f"agent {agent}: an interval line with a line break in it"
    return None
