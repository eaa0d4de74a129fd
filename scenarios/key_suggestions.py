"""The keys a model accepts at an error location, for "did you mean ...?" hints.

Walks the model's type annotations along a pydantic error location (fields, dict
values, list items, discriminated-union tags) to the model whose key was unknown.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel


def _unwrap(tp: Any) -> Any:
    """Strip Annotated[...] and Optional[...] until a plain type (or a real union) is left."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
            continue
        if origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) == 1:
                tp = members[0]
                continue
        return tp


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _field(model: type[BaseModel], key: str) -> Any:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info.annotation
    return None


def _tagged(members: tuple[Any, ...], tag: str) -> Any:
    """The union member whose ``type`` field is ``Literal[tag]``."""
    for member in members:
        member = _unwrap(member)
        if _is_model(member):
            literal = _field(member, "type")
            if literal is not None and tag in typing.get_args(literal):
                return member
    return None


def _step(tp: Any, part: str | int) -> Any:
    tp = _unwrap(tp)
    origin = typing.get_origin(tp)
    if _is_model(tp):
        return _field(tp, str(part))
    if origin is dict:
        return typing.get_args(tp)[1]
    if origin is list:
        return typing.get_args(tp)[0]
    if origin in (typing.Union, types.UnionType) and isinstance(part, str):
        return _tagged(typing.get_args(tp), part)
    return None


def known_keys(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """The keys of the table at ``loc`` (a pydantic location, tags included)."""
    tp: Any = model
    for part in loc:
        tp = _step(tp, part)
        if tp is None:
            return []
    tp = _unwrap(tp)
    if not _is_model(tp):
        return []
    return [info.alias or name for name, info in tp.model_fields.items()]


def did_you_mean(word: str, candidates: list[str]) -> str:
    """`` (did you mean 'roles'?)`` for a close candidate, else ``""``."""
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
