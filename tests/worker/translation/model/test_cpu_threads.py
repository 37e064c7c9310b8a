"""The engine's thread count follows the CPU it gets, and OpenMP's spin-wait is bounded unless set
(worker.translation.model.cpu_threads)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from worker.translation.model import cpu_threads
from worker.translation.model.cpu_threads import ThreadGovernor, idle_seconds, prepare_openmp, run_delay_seconds


class Counters:
    """A clock and the two counters the governor reads, moved by hand."""

    def __init__(self) -> None:
        self.now, self.waited, self.idle = 0.0, 0.0, 0.0

    def advance(self, seconds: float, waiting: float, idle: float) -> None:
        self.now += seconds
        self.waited += waiting * seconds
        self.idle += idle * seconds


def governor(counters: Counters, most: int, chosen: list[int]) -> ThreadGovernor:
    return ThreadGovernor(
        most, chosen.append, clock=lambda: counters.now, waited=lambda: counters.waited, idle=lambda: counters.idle
    )


def test_fewer_threads_while_they_wait_for_a_cpu_and_more_while_cpus_idle():
    counters, chosen = Counters(), []
    team = governor(counters, 3, chosen)
    assert chosen == [3]
    counters.advance(0.5, waiting=0.1, idle=0.0)  # quiet: nothing to change
    team.tick()
    counters.advance(0.5, waiting=0.9, idle=0.0)  # a neighbour keeps our threads waiting
    team.tick()
    counters.advance(0.5, waiting=0.6, idle=0.0)
    team.tick()
    counters.advance(0.5, waiting=0.6, idle=0.0)  # never below one
    team.tick()
    assert chosen == [3, 2, 1] and team.threads == 1
    counters.advance(0.5, waiting=0.0, idle=1.0)  # the neighbour left
    team.tick()
    counters.advance(0.5, waiting=0.0, idle=1.0)
    team.tick()
    counters.advance(0.5, waiting=0.0, idle=1.0)  # never above the CPUs allowed
    team.tick()
    assert chosen == [3, 2, 1, 2, 3] and team.changes == 4


def test_no_measurement_from_too_short_an_interval():
    counters, chosen = Counters(), []
    team = governor(counters, 2, chosen)
    counters.advance(cpu_threads.SAMPLE_SECONDS / 4, waiting=2.0, idle=0.0)
    team.tick()
    assert chosen == [2]
    counters.advance(cpu_threads.SAMPLE_SECONDS, waiting=2.0, idle=0.0)  # measured from the last sample
    team.tick()
    assert chosen == [2, 1]


def test_watching_ticks_and_keeps_the_answer_of_the_interrupt():
    counters, chosen = Counters(), []
    team = governor(counters, 2, chosen)
    counters.advance(1.0, waiting=1.0, idle=0.0)
    assert team.watching(lambda: True)() is True
    assert team.watching(None)() is False
    assert chosen == [2, 1]


def test_the_kernel_counters_move_with_work_and_wait():
    """The real counters: a busy thread of ours shows CPU time, idle CPUs show idle time (this machine's
    other load decides how much, so only that they are read and do not go back)."""
    waited, idle = run_delay_seconds(), idle_seconds({0})
    stop = time.monotonic() + 0.3

    def spin() -> None:
        while time.monotonic() < stop:
            pass

    spinner = threading.Thread(target=spin)
    spinner.start()
    spinner.join()
    assert run_delay_seconds() >= waited and idle_seconds({0}) >= idle
    assert run_delay_seconds(Path("/nonexistent")) == 0.0 and idle_seconds({0}, Path("/nonexistent")) == 0.0


def test_spin_bounded_unless_the_operator_chose():
    environ: dict[str, str] = {}
    prepare_openmp(environ)
    assert environ == {"GOMP_SPINCOUNT": cpu_threads.SPIN_COUNT}
    for chosen in ({"GOMP_SPINCOUNT": "300000"}, {"OMP_WAIT_POLICY": "PASSIVE"}):
        environ = dict(chosen)
        prepare_openmp(environ)
        assert environ == chosen


def test_a_configured_thread_count_is_kept():
    chosen: list[int] = []
    assert cpu_threads.thread_governor(False, 3, chosen.append) is None and chosen == [3]
    team = cpu_threads.thread_governor(True, 2, chosen.append)
    assert team is not None and team.most == 2 and chosen == [3, 2]


def test_an_int8_engine_governs_its_team_and_a_float_or_configured_one_keeps_it():
    """The real engine on the shipped copy model: int8 by default is governed; a float model, or a set
    TRANSQ_TORCH_THREADS, keeps one team size (float tokens stay generate()'s bit for bit)."""
    import torch

    from shared.settings import Settings
    from worker.translation.model.engine import TranslationEngine
    from worker.translation.model.offline_model import COPY_MODEL

    governed = TranslationEngine(Settings(model=str(COPY_MODEL), max_new_tokens=8))
    assert governed.governor is not None and governed.governor.most >= 1
    assert governed.translate(["你好。"])  # decoding steps tick the governor
    assert 1 <= torch.get_num_threads() <= governed.governor.most
    assert TranslationEngine(Settings(model=str(COPY_MODEL), quantize="none")).governor is None
    assert TranslationEngine(Settings(model=str(COPY_MODEL), torch_threads=1)).governor is None
    assert torch.get_num_threads() == 1
