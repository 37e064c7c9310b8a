"""RELIABILITY 11: the probe reports the cgroup's limit, not the host's RAM."""

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
