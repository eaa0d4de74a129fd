"""The load agent's Redis backend (see ``agents/backends.py``): redis-py's asyncio client
(``session.py``), every workload as its file's ``redis`` commands (``file_runner.py``;
the built-in ycsb is its shipped file with Redis's slots), errors under the stable
classes of ``errors.py``. Of the built-in schemas only ycsb has a Redis form."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loadtower.engines.redis.agent.errors import RedisAuthFailed, RedisLoading
from loadtower.engines.redis.agent.session import RedisSession

if TYPE_CHECKING:
    from loadtower.agents.driver_loop import PhaseConfig
    from loadtower.agents.workload.file_ops import FileRunner
    from loadtower.protocol.workload_file_spec import WorkloadFileSpec


class RedisBackend:
    """A Redis server (one: no cluster) through redis-py."""

    engine = "redis"
    default_port = 6379

    def session_key(self, cfg: PhaseConfig) -> tuple:
        return ("redis", tuple(cfg.contact_points), cfg.port, cfg.username)

    async def open(self, cfg: PhaseConfig) -> Any:
        session = RedisSession()
        try:
            await session.connect(cfg.contact_points, cfg.port or self.default_port,
                                  cfg.username, cfg.password, pool_size=cfg.max_in_flight)
        except BaseException:
            await session.close()
            raise
        return session

    def file_runner(self, session: Any, spec: WorkloadFileSpec) -> FileRunner:
        # deferred: the file runner loads numpy (agents/workload); only a workload file needs it
        from loadtower.engines.redis.agent.file_runner import RedisFileRunner

        return RedisFileRunner(session)

    def load_rows(self, cfg: PhaseConfig) -> int:
        return max(1, int(cfg.spec["workload"].get("batch_size", 100)))

    def advice(self, exc: BaseException) -> str | None:
        if isinstance(exc, RedisAuthFailed):
            return str(exc)
        if isinstance(exc, RedisLoading):
            return "Redis is still loading its data set after a start: ops fail until it is done"
        return None
