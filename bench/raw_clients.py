"""Raw baselines for bench/agent.py: the same YCSB-C reads at a fixed rate, written the
shortest way each driver allows, with no measurement beyond counting. Prints one JSON
object: ops, errors, cpu_s (process CPU during the timed part)."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import threading
import time

from loadtower.agents.workload.keys import fnv64


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def keys(records: int, n: int) -> list[str]:
    rng = random.Random(1)
    return [f"user{fnv64(rng.randrange(records))}" for _ in range(n)]


def raw_driver(a: argparse.Namespace) -> dict:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    cluster = Cluster(
        a.hosts.split(","),
        port=a.port,
        protocol_version=5,
        auth_provider=PlainTextAuthProvider(a.user, a.password),
    )
    session = cluster.connect()
    stmt = session.prepare(f"SELECT * FROM {a.keyspace}.usertable WHERE y_id = ?")
    ks = keys(a.records, a.ops)
    done = threading.Semaphore(0)
    errors = [0]
    slots = threading.Semaphore(128)

    def ok(_rows: object) -> None:
        slots.release()
        done.release()

    def err(_exc: object) -> None:
        errors[0] += 1
        ok(None)

    start_cpu, start = cpu_s(), time.monotonic()
    for i, key in enumerate(ks):
        delay = start + i / a.rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        slots.acquire()
        session.execute_async(stmt, (key,)).add_callbacks(ok, err)
    for _ in ks:
        done.acquire()
    used, wall = cpu_s() - start_cpu, time.monotonic() - start
    cluster.shutdown()
    return {"ops": a.ops, "errors": errors[0], "cpu_s": used, "wall_s": wall}


async def raw_acsylla(a: argparse.Namespace) -> dict:
    import acsylla

    cluster = acsylla.create_cluster(
        a.hosts.split(","), port=a.port, username=a.user, password=a.password, log_level="critical"
    )
    session = await cluster.create_session()
    prepared = await session.create_prepared(f"SELECT * FROM {a.keyspace}.usertable WHERE y_id = ?")
    ks = keys(a.records, a.ops)
    slots = asyncio.Semaphore(128)
    errors = 0

    async def one(key: str) -> None:
        nonlocal errors
        try:
            await session.execute(prepared.bind([key]))
        except Exception:  # noqa: BLE001
            errors += 1
        finally:
            slots.release()

    tasks = []
    start_cpu, start = cpu_s(), time.monotonic()
    for i, key in enumerate(ks):
        delay = start + i / a.rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        await slots.acquire()
        tasks.append(asyncio.create_task(one(key)))
    await asyncio.gather(*tasks)
    used, wall = cpu_s() - start_cpu, time.monotonic() - start
    await session.close()
    return {"ops": a.ops, "errors": errors, "cpu_s": used, "wall_s": wall}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("client", choices=["driver", "acsylla"])
    for name in ("hosts", "user", "password", "keyspace"):
        p.add_argument(f"--{name}", required=True)
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--records", type=int, required=True)
    p.add_argument("--ops", type=int, required=True)
    p.add_argument("--rate", type=float, required=True)
    a = p.parse_args()
    result = raw_driver(a) if a.client == "driver" else asyncio.run(raw_acsylla(a))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
