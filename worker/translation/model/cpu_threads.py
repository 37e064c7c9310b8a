"""How many CPU threads the engine computes on, and how they wait: kept in step with the CPU it gets.

torch's CPU kernels run on a GNU OpenMP team (libgomp, which the torch wheel carries). Between parallel
regions, and at their end, a team thread spins for GOMP_SPINCOUNT iterations (300,000 by default, about a
millisecond) before it sleeps. On a quiet machine that is what makes small regions cheap; beside another
busy process it is a collapse: a thread spinning for a teammate that the kernel has descheduled burns the
CPU that teammate needs, and the main thread's Python between regions shares a core with a spinner
(bench.engines measured beam 1 at 24.5 sentences/s quiet, 4.95 beside one CPU burner). So:

- the spin is bounded (`prepare_openmp`, before torch loads libgomp): long enough to span the gaps of a
  decoding step on a quiet machine, short enough that a waiting thread gives its CPU back (bench.contention
  measures the choice);
- the team is no larger than the CPUs this process may use (affinity, the cgroup's CPU quota:
  shared.memory.allowed_cpus) nor than the CPU it actually gets (`ThreadGovernor`): while its threads wait
  for a CPU (the kernel's run delay, /proc/self/task/*/schedstat) the team shrinks by one; while the CPUs it
  may use sit idle (/proc/stat) it grows back.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)

# Iterations a libgomp thread spins before sleeping (its default: 300,000). bench.contention: 20,000 keeps
# a quiet machine's speed and most of it beside a CPU burner; 0 (OMP_WAIT_POLICY=PASSIVE) loses quiet speed.
SPIN_COUNT = "20000"
WAITING_TOO_LONG = 0.25  # threads of ours waiting for a CPU, on average: one fewer next time
IDLE_ENOUGH = 0.75  # allowed CPUs idle, on average, while the team is smaller than the most: one more
SAMPLE_SECONDS = 0.2  # the shortest interval measured; reading the counters costs ~0.1 ms


def prepare_openmp(environ: dict | None = None) -> None:
    """Bound OpenMP's spin-wait, unless the operator set it: call before torch is first imported (libgomp
    reads its environment once, when it loads)."""
    environ = os.environ if environ is None else environ
    if "GOMP_SPINCOUNT" not in environ and "OMP_WAIT_POLICY" not in environ:
        environ["GOMP_SPINCOUNT"] = SPIN_COUNT


def run_delay_seconds(task_root: Path = Path("/proc/self/task")) -> float:
    """Time this process's threads have spent runnable but waiting for a CPU, in all (schedstat's second field)."""
    total = 0
    try:
        tasks = list(task_root.iterdir())
    except OSError:
        return 0.0
    for task in tasks:
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended meanwhile, or a kernel without schedstats
    return total / 1e9


def idle_seconds(cpus: set[int], stat: Path = Path("/proc/stat")) -> float:
    """Idle time (idle and iowait) of these CPUs so far, in all."""
    ticks = 0
    try:
        lines = stat.read_text().splitlines()
    except OSError:
        return 0.0
    for line in lines:
        name, _, rest = line.partition(" ")
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
            fields = rest.split()
            ticks += int(fields[3]) + int(fields[4])
    return ticks / os.sysconf("SC_CLK_TCK")


class ThreadGovernor:
    """The engine's intra-op thread count, between 1 and `most`, following the CPU this process gets.

    `tick()` is called often (before each decoding step); at most every SAMPLE_SECONDS it reads how long the
    process's threads waited for a CPU and how long the allowed CPUs idled since the last sample, and moves
    the count by one: down while threads wait (others use the CPUs), up while CPUs idle."""

    def __init__(
        self,
        most: int,
        set_threads: Callable[[int], None],
        clock: Callable[[], float] = time.monotonic,
        waited: Callable[[], float] = run_delay_seconds,
        idle: Callable[[], float] | None = None,
    ):
        self.most = max(1, most)
        self.threads = self.most
        self._set_threads = set_threads
        self._clock, self._waited = clock, waited
        cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))
        self._idle = idle or (lambda: idle_seconds(cpus))
        self.changes = 0
        self._set_threads(self.threads)
        self._mark()

    def _mark(self) -> None:
        self._at, self._waited_at, self._idle_at = self._clock(), self._waited(), self._idle()

    def tick(self) -> None:
        """Measure and adjust, when at least SAMPLE_SECONDS passed since the last time."""
        elapsed = self._clock() - self._at
        if elapsed < SAMPLE_SECONDS:
            return
        waiting = (self._waited() - self._waited_at) / elapsed
        idle = (self._idle() - self._idle_at) / elapsed
        wanted = self.threads
        if waiting > WAITING_TOO_LONG and self.threads > 1:
            wanted = self.threads - 1
        elif idle > IDLE_ENOUGH and self.threads < self.most:
            wanted = self.threads + 1
        if wanted != self.threads:
            log.debug("intra-op threads %d -> %d (waiting %.2f, idle %.2f CPUs)", self.threads, wanted, waiting, idle)
            self.threads = wanted
            self.changes += 1
            self._set_threads(wanted)
        self._mark()

    def watching(self, interrupt: Callable[[], bool] | None) -> Callable[[], bool]:
        """`interrupt` (asked before every decoding step), with a tick first."""

        def ask() -> bool:
            self.tick()
            return bool(interrupt and interrupt())

        return ask


def thread_governor(governed: bool, threads: int, set_threads: Callable[[int], None]) -> ThreadGovernor | None:
    """A governor following the CPU this process gets, from `threads` down; not `governed`: `threads` set
    and kept (None)."""
    if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
        log.warning("OpenMP threads spin unbounded: prepare_openmp() was not called before torch was imported")
    if not governed:
        set_threads(threads)
        return None
    return ThreadGovernor(threads, set_threads)
