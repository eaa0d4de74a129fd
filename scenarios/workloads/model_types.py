"""The value types of a workload file's keys that its slots share (an engine's slot
models, ``loadtower.engines.NAME``, import them without the file's whole model)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

OptionValue = str | int | float | bool
# a key of an option's map (compaction = {'class': ..., 'max_threshold': 32}): a
# word, never quotes or anything else that could end the map in the rendered statement
OPTION_KEY = re.compile(r"[A-Za-z0-9_.-]{1,100}")
OptionKey = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")]
Option = OptionValue | dict[OptionKey, OptionValue]
Statement = Annotated[str, Field(min_length=1, max_length=100_000)]
