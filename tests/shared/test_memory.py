"""RELIABILITY 11: the probe reports the cgroup's limit, not the host's RAM."""

import os
from pathlib import Path

import psutil

from shared.memory import probe_memory

MIB = 2**20


def test_cgroup_v2_limit_and_usage_minus_inactive_file(tmp_path: Path):
    (tmp_path / "memory.max").write_text(f"{512 * MIB}\n")
    (tmp_path / "memory.current").write_text(f"{300 * MIB}\n")
    (tmp_path / "memory.stat").write_text(f"anon 1\ninactive_file {100 * MIB}\nactive_file 5\n")
    status = probe_memory(tmp_path)
    assert (status.source, status.limit_bytes, status.used_bytes) == ("cgroup2", 512 * MIB, 200 * MIB)
    assert status.available_bytes == 312 * MIB


def test_cgroup_v2_max_means_the_host(tmp_path: Path):
    (tmp_path / "memory.max").write_text("max\n")
    (tmp_path / "memory.current").write_text("1000\n")
    status = probe_memory(tmp_path)
    assert status.source == "host"
    assert status.limit_bytes == psutil.virtual_memory().total


def test_cgroup_v1(tmp_path: Path):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "memory.limit_in_bytes").write_text(f"{256 * MIB}\n")
    (memory / "memory.usage_in_bytes").write_text(f"{200 * MIB}\n")
    (memory / "memory.stat").write_text(f"cache 1\ntotal_inactive_file {50 * MIB}\n")
    status = probe_memory(tmp_path)
    assert (status.source, status.limit_bytes, status.used_bytes) == ("cgroup1", 256 * MIB, 150 * MIB)


def test_cgroup_v1_unlimited_is_the_host(tmp_path: Path):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (memory / "memory.usage_in_bytes").write_text("1\n")
    assert probe_memory(tmp_path).source == "host"


def test_limit_above_host_ram_is_the_host(tmp_path: Path):
    (tmp_path / "memory.max").write_text(str(psutil.virtual_memory().total * 4))
    assert probe_memory(tmp_path).source == "host"


def test_no_cgroup(tmp_path: Path):
    status = probe_memory(tmp_path / "nothing")
    assert status.source == "host" and status.limit_bytes == psutil.virtual_memory().total


def _own_cgroup(tmp_path: Path, text: str) -> Path:
    own = tmp_path / "self-cgroup"
    own.write_text(text)
    return own


def test_cpus_from_the_quota_of_the_process_own_v2_cgroup(tmp_path: Path):
    """A process in a child cgroup (systemd-run --scope, a pod's container) is held to its quota, not the root's."""
    from shared.memory import allowed_cpus

    (tmp_path / "cpu.max").write_text("max 100000\n")
    (tmp_path / "jobs" / "engine").mkdir(parents=True)
    (tmp_path / "jobs" / "engine" / "cpu.max").write_text("100000 100000\n")
    assert allowed_cpus(tmp_path, _own_cgroup(tmp_path, "0::/jobs/engine\n")) == 1
    assert allowed_cpus(tmp_path, _own_cgroup(tmp_path, "0::/\n")) == min(2, len(os.sched_getaffinity(0)))


def test_cpus_from_a_parent_v1_cgroup_quota(tmp_path: Path):
    """cgroup v1: the cpu controller's hierarchy; a quota set above the process's own cgroup counts too."""
    from shared.memory import allowed_cpus

    parent = tmp_path / "cpu" / "bench"
    (parent / "engine").mkdir(parents=True)
    (parent / "cpu.cfs_quota_us").write_text("50000\n")
    (parent / "cpu.cfs_period_us").write_text("100000\n")
    (parent / "engine" / "cpu.cfs_quota_us").write_text("-1\n")
    own = _own_cgroup(tmp_path, "4:memory:/other\n2:cpu,cpuacct:/bench/engine\n0::/\n")
    assert allowed_cpus(tmp_path, own) == 1  # half a CPU still gets one thread
    assert allowed_cpus(tmp_path, _own_cgroup(tmp_path, "garbage")) == len(os.sched_getaffinity(0))
