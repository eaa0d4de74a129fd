"""Schema statements are sent again after a driver timeout (another coordinator), and
only then, within the total bound."""

from __future__ import annotations

import asyncio

import pytest

from loadtower.engines.cassandra.agent import ddl_retry


class CassErrorLibRequestTimedOut(Exception):
    pass


class SyntaxException(Exception):
    pass


def _run(failures: list[Exception], now: list[float]) -> int:
    sent = 0

    async def send() -> None:
        nonlocal sent
        sent += 1
        now[0] += ddl_retry.ATTEMPT_S
        if failures:
            raise failures.pop(0)

    asyncio.run(ddl_retry.with_retries(send, clock=lambda: now[0]))
    return sent


def test_a_timed_out_statement_is_sent_again() -> None:
    assert _run([CassErrorLibRequestTimedOut(), CassErrorLibRequestTimedOut()], [0.0]) == 3


def test_other_errors_are_not_retried() -> None:
    with pytest.raises(SyntaxException):
        _run([SyntaxException()], [0.0])


def test_retries_end_at_the_total_bound() -> None:
    many = [CassErrorLibRequestTimedOut() for _ in range(100)]
    with pytest.raises(CassErrorLibRequestTimedOut):
        _run(many, [0.0])
    assert len(many) == 100 - int(ddl_retry.TOTAL_S / ddl_retry.ATTEMPT_S)
