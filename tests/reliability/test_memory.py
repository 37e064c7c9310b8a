"""RELIABILITY 11-13 in the worker: the guard shrinks batches to the cgroup's headroom (11 is unit-tested in
tests/shared/test_memory.py against fake cgroup files; 13 is in test_worker_faults.py)."""

import time
from pathlib import Path

import pytest

from shared.settings import Settings
from shared.store.keys import Keys
from shared.store.stats import Stats

pytestmark = pytest.mark.slow
GIB = 2**30


def fake_cgroup(root: Path, available: int) -> None:
    """A cgroup v2 directory whose limit leaves `available` bytes free."""
    root.mkdir(exist_ok=True)
    (root / "memory.max").write_text(str(8 * GIB))
    (root / "memory.current").write_text(str(8 * GIB - available))
    (root / "memory.stat").write_text("inactive_file 0\n")


def batch_sizes(stack) -> dict[str, int]:
    _, hist = Stats(stack.r, Keys()).read()  # cumulative buckets, as /metrics exports them
    return {k.split(":")[1]: int(v) for k, v in hist.items() if k.startswith("batch_size:")}


def test_12_batch_is_shrunk_to_fit_and_too_big_fails_cleanly(make_stack, model_dir, tmp_path):
    from worker.translation.model.engine import TranslationEngine

    sentences = [f"内存守卫测试第{i:02d}句子" for i in range(32)]
    settings = Settings(model=str(model_dir), max_new_tokens=8)
    engine = TranslationEngine(settings)
    longest = max(len(ids) for ids in engine.token_ids(sentences)) + 1
    one, all_32 = engine.estimate_batch_bytes(1, longest), engine.estimate_batch_bytes(32, longest)
    assert all_32 > 8 * one
    cgroup = tmp_path / "cgroup"
    fake_cgroup(cgroup, available=4 * one)  # room for about four sentences at a time
    s = make_stack(cgroup_root=str(cgroup), memory_headroom_mb=0)
    worker = s.workers[0]
    (child,) = worker.child_pids()
    job = s.client.wait(s.client.submit(["。".join(sentences) + "。"])["id"], timeout=120)
    assert job["status"] == "succeeded", job
    sizes = batch_sizes(s)
    assert sizes.get("4", 0) == sizes["+Inf"] > 1  # every batch had at most 4 sentences, and there were several

    fake_cgroup(cgroup, available=one // 2)  # not even one sentence fits
    failed = s.client.wait(s.client.submit(["这个句子放不下。"])["id"], timeout=60)
    assert failed["status"] == "failed" and failed["error"]["code"] == "resource_exhausted", failed
    time.sleep(0.5)
    assert worker.child_pids() == [child]  # no OOM kill, no restart
    fake_cgroup(cgroup, available=GIB)
    assert s.client.wait(s.client.submit(["内存恢复了。"])["id"], timeout=60)["status"] == "succeeded"
