"""Finding and stopping loadtower processes left on hosts after their orchestrator died.

Every process the orchestrator starts for a run (the Locust master here, the load
workers on the agent hosts, and whatever they start in turn) inherits two environment
variables: LOADTOWER_RUN (the run id) and LOADTOWER_ORCHESTRATOR (host:pid:start:boot
id of the orchestrator process, see protocol/process_identity.py). A shell script run over SSH
lists the processes carrying them (/proc/PID/environ), with their start times and,
when the orchestrator ran on that same machine, the orchestrator's start time there.
A process is a leftover when its orchestrator is gone; one whose orchestrator is alive
is left alone, and one whose orchestrator ran on a machine that cannot be checked from
here is stopped only on request (--all). Stopping is SIGTERM, then SIGKILL after a
timeout, each time checking the pid still names the same process (its start time).
"""

from __future__ import annotations

import shlex
import socket
from dataclasses import dataclass

from loadtower.protocol.process_identity import ProcessId, Verdict, this_process, verdict

RUN_ENV = "LOADTOWER_RUN"
ORCHESTRATOR_ENV = "LOADTOWER_ORCHESTRATOR"


def marker_env(run_id: str) -> dict[str, str]:
    """The environment that marks a process as started by this orchestrator for `run_id`."""
    return {RUN_ENV: run_id, ORCHESTRATOR_ENV: this_process().encode()}


def marker_prefix(run_id: str) -> str:
    """`env K=V K=V ` to put before a remote command so it carries the marker."""
    pairs = " ".join(f"{k}={shlex.quote(v)}" for k, v in marker_env(run_id).items())
    return f"env {pairs} "


# POSIX sh, Linux /proc. One "MACHINE boot-id pid-namespace hostname" line, then per
# marked process a tab-separated
# "PROC pid start state orchestrator-start-here run orchestrator cmdline" line.
LIST_SCRIPT = r"""
echo "MACHINE $(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo -) \
$(readlink /proc/self/ns/pid 2>/dev/null || echo -) $(uname -n)"
for f in $(grep -l -a -s 'LOADTOWER_RUN=' /proc/[0-9]*/environ 2>/dev/null); do
  d=${f%/environ}; p=${d#/proc/}
  [ "$p" = "$$" ] && continue
  run=$(tr '\0' '\n' < "$f" 2>/dev/null | sed -n 's/^LOADTOWER_RUN=//p' | head -n 1)
  [ -n "$run" ] || continue
  orch=$(tr '\0' '\n' < "$f" 2>/dev/null | sed -n 's/^LOADTOWER_ORCHESTRATOR=//p' | head -n 1)
  stat=$(cat "$d/stat" 2>/dev/null) || continue
  rest=${stat##*) }
  set -- $rest
  state=$1; start=${20}
  [ "$state" = Z ] && continue
  ostart=-
  o=${orch#*:}; opid=${o%%:*}
  case "$opid" in
    ''|*[!0-9]*) ;;
    *) ostat=$(cat "/proc/$opid/stat" 2>/dev/null) && {
         orest=${ostat##*) }; set -- $orest
         [ "$1" = Z ] || ostart=${20}
       } ;;
  esac
  cmd=$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null | cut -c1-300)
  printf 'PROC\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "$start" "$state" "$ostart" "$run" "$orch" "$cmd"
done
"""

_SAME = r"""
same() {
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  want=$2; r=${s##*) }; set -- $r
  [ "$1" != Z ] && [ "${20}" = "$want" ]
}
"""


def stop_script(targets: list[tuple[int, int]], timeout_s: float) -> str:
    """TERM each (pid, start time), wait up to timeout_s, KILL the rest; one line per pid:
    `GONE pid` (not that process any more: never signalled), `TERMINATED pid` (gone after
    TERM), `KILLED pid`, `SURVIVED pid` (still there after KILL)."""
    items = " ".join(f"{pid}:{start}" for pid, start in targets)
    ticks = max(1, int(timeout_s / 0.2))
    return (
        _SAME
        + f'T="{items}"\n'
        + r"""
live=""
for t in $T; do
  if same "${t%:*}" "${t#*:}"; then live="$live $t"; else echo "GONE ${t%:*}"; fi
done
for t in $live; do kill -TERM "${t%:*}" 2>/dev/null; done
i=0
while [ "$i" -lt """
        + str(ticks)
        + r""" ]; do
  left=""
  for t in $live; do same "${t%:*}" "${t#*:}" && left="$left $t"; done
  [ -z "$left" ] && break
  sleep 0.2; i=$((i + 1))
done
killed=""
for t in $live; do
  if same "${t%:*}" "${t#*:}"; then kill -KILL "${t%:*}" 2>/dev/null; killed="$killed $t"
  else echo "TERMINATED ${t%:*}"; fi
done
i=0
while [ -n "$killed" ] && [ "$i" -lt 10 ]; do
  left=""
  for t in $killed; do same "${t%:*}" "${t#*:}" && left="$left $t"; done
  [ -z "$left" ] && break
  sleep 0.2; i=$((i + 1))
done
for t in $killed; do
  if same "${t%:*}" "${t#*:}"; then echo "SURVIVED ${t%:*}"; else echo "KILLED ${t%:*}"; fi
done
true
"""
    )


@dataclass(frozen=True)
class MachineId:
    """Which machine a listing came from: containers share the boot id, not the pid
    namespace (nor, usually, the host name)."""

    boot: str | None
    pid_namespace: str | None
    hostname: str | None

    @property
    def key(self) -> tuple[str, str] | None:
        return (self.boot, self.pid_namespace or "") if self.boot else None


@dataclass
class Found:
    pid: int
    start: int
    run_id: str
    orchestrator: ProcessId | None
    orchestrator_start_here: int | None  # start ticks of the orchestrator's pid on this host
    command: str
    state: Verdict = "unknown"  # of the orchestrator


def parse_listing(text: str) -> tuple[MachineId | None, list[Found]]:
    """(the machine, its marked processes) from LIST_SCRIPT's output."""
    machine: MachineId | None = None
    found = []
    for line in text.splitlines():
        if line.startswith("MACHINE "):
            words = [None if w == "-" else w for w in line.split()[1:]] + [None] * 3
            machine = MachineId(words[0], words[1], words[2])
            continue
        parts = line.split("\t")
        if len(parts) != 8 or parts[0] != "PROC" or not parts[1].isdigit():
            continue
        _, pid, start, _state, ostart, run, orch, cmd = parts
        found.append(
            Found(
                pid=int(pid),
                start=int(start) if start.isdigit() else -1,
                run_id=run,
                orchestrator=ProcessId.decode(orch) if orch else None,
                orchestrator_start_here=int(ostart) if ostart.isdigit() else None,
                command=cmd.strip(),
            )
        )
    return machine, found


def orchestrator_state(proc: Found, machine: MachineId | None) -> Verdict:
    """Is the orchestrator that started `proc` alive: checked here, or on proc's own host."""
    orch = proc.orchestrator
    if orch is None:
        return "unknown"
    if orch.hostname == socket.gethostname():
        return verdict(orch)  # checked here (a reboot since counts as gone)
    if (
        machine is not None
        and orch.boot_id
        and orch.boot_id == machine.boot
        and orch.hostname == machine.hostname
    ):  # it ran on that very host: its pid and start time were read there
        alive = orch.started is not None and proc.orchestrator_start_here == orch.started
        return "alive" if alive else "dead"
    return "unknown"


def decide(proc: Found, machine: MachineId | None, stop_all: bool) -> bool:
    """Set proc.state and say whether cleanup stops it."""
    proc.state = orchestrator_state(proc, machine)
    return proc.state == "dead" or stop_all


def describe_owner(proc: Found) -> str:
    orch = proc.orchestrator
    if orch is None:
        return "no orchestrator recorded"
    where = f"pid {orch.pid} on {orch.hostname}"
    return {
        "dead": f"orchestrator ({where}) gone",
        "alive": f"live run: orchestrator ({where}) still running",
        "unknown": f"orchestrator ({where}) cannot be checked from here",
    }[proc.state]


def parse_stop(text: str) -> dict[int, str]:
    """pid -> "gone" | "terminated" | "killed" | "survived" from stop_script's output."""
    out = {}
    for line in text.splitlines():
        word, _, pid = line.strip().partition(" ")
        if pid.isdigit() and word in ("GONE", "TERMINATED", "KILLED", "SURVIVED"):
            out[int(pid)] = word.lower()
    return out
