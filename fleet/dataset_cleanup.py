"""`loadtower cleanup --datasets`: remove the data set copies a run left on the agent
hosts (``<bootstrap_dir>/datasets/``, see ``dataset_upload.py``). They are a cache: a
later run of the same file skips the copy, so cleanup removes them only when asked."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from loadtower.errors import LoadtowerError
from loadtower.fleet.dataset_upload import DATASETS_DIR, shell_word

REMOVE_TIMEOUT_S = 60.0
Runner = Callable[[str, float], Awaitable[tuple[int, str, str]]]


def datasets_script(bootstrap_dir: str, dry_run: bool) -> str:
    """Count (and unless `dry_run` remove) the data set directory: one line
    ``DATASETS <files> <bytes>`` on stdout."""
    directory = shell_word(f"{bootstrap_dir.rstrip('/')}/{DATASETS_DIR}")
    remove = "" if dry_run else ' && rm -rf -- "$d"'
    return (f'd={directory}; if [ -d "$d" ]; then '
            f'n=$(find "$d" -type f | wc -l) && b=$(du -sb "$d" | cut -f1){remove} && '
            'echo "DATASETS $n $b"; else echo "DATASETS 0 0"; fi')


def parse_datasets(out: str) -> tuple[int, int] | None:
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "DATASETS":
            return int(parts[1]), int(parts[2])
    return None


async def remove_datasets(label: str, run: Runner, bootstrap_dir: str, dry_run: bool) -> bool:
    """Print what the host held (and removed); False when it could not be done."""
    where = f"{bootstrap_dir.rstrip('/')}/{DATASETS_DIR}"
    try:
        status, out, err = await run(datasets_script(bootstrap_dir, dry_run), REMOVE_TIMEOUT_S)
    except (LoadtowerError, TimeoutError) as exc:
        print(f"{label}: data set copies in {where} NOT REMOVED: {exc}")
        return False
    found = parse_datasets(out)
    if status != 0 or found is None:
        detail = ((err or out).strip().splitlines() or [f"exit status {status}"])[-1]
        print(f"{label}: data set copies in {where} NOT REMOVED: {detail}")
        return False
    files, size = found
    if files == 0:
        print(f"{label}: no data set copies in {where}")
    else:
        done = "would remove" if dry_run else "removed"
        print(f"{label}: {done} {files} data set file(s), {size / 1e6:.1f} MB, in {where}")
    return True


async def remove_all(labelled: list[tuple[str, Runner, str]], dry_run: bool) -> bool:
    """`labelled`: (host label, its runner, its bootstrap_dir) per agent machine."""
    done = await asyncio.gather(*(remove_datasets(label, run, base, dry_run)
                                  for label, run, base in labelled))
    return all(done)
