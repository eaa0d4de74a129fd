"""`loadtower cleanup`: the private directories of runs that died, off every host.

A run puts its link key and secrets in ``/tmp/loadtower-private-UID/RUN_ID/`` on each
agent host (agents/secret_dir.py) and removes it at its end; an orchestrator that died
leaves it. This script, run as each host's SSH user, removes every such directory of
that user whose run has no live process left on the machine (a process carrying
``LOADTOWER_RUN=RUN_ID``, cleanup_script.py); with a run id only that run's.
"""

from __future__ import annotations

import shlex

from loadtower.agents.secret_dir import ROOT_PREFIX

# POSIX sh + GNU grep (-z); one line per run directory: "REMOVED RUN", "WOULD RUN",
# "LIVE RUN" (its run still has a process here: left alone), "REFUSED PATH" (not ours).
SWEEP_SCRIPT = r"""
b="$PREFIX$(id -u)"
[ -e "$b" ] || [ -L "$b" ] || exit 0
if [ -L "$b" ] || [ ! -d "$b" ] || [ ! -O "$b" ]; then echo "REFUSED $b"; exit 0; fi
for d in "$b"/*; do
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  r=${d##*/}
  [ -n "$ONLY" ] && [ "$r" != "$ONLY" ] && continue
  # (grep exits 2 when a process vanished while it read: its output tells, not its status)
  live=$(grep -l -a -s -z -x -F "LOADTOWER_RUN=$r" /proc/[0-9]*/environ 2>/dev/null | head -n 1)
  if [ -n "$live" ]; then
    echo "LIVE $r"; continue
  fi
  if [ -n "$DRY" ]; then echo "WOULD $r"; else rm -rf -- "$d" && echo "REMOVED $r"; fi
done
true
"""


def sweep_script(run_id: str | None, dry_run: bool, prefix: str = ROOT_PREFIX) -> str:
    return (f"PREFIX={shlex.quote(prefix)}; ONLY={shlex.quote(run_id or '')}; "
            f"DRY={'1' if dry_run else ''}\n" + SWEEP_SCRIPT)


def describe(label: str, out: str) -> tuple[list[str], bool]:
    """The lines to print for one machine's sweep output; False when something was refused."""
    lines, ok = [], True
    words = {"REMOVED": "removed", "WOULD": "would remove", "LIVE": "left alone (its run is live)"}
    for raw in out.splitlines():
        verb, _, what = raw.partition(" ")
        if verb in words:
            lines.append(f"{label}: the private directory of run {what}: {words[verb]}")
        elif verb == "REFUSED":
            ok = False
            lines.append(f"{label}: {what} is not this user's own directory: left alone")
    return lines, ok
