"""Translation memories in a real Redis (shared.store.memory_store): exact lookups, fuzzy lookups through the
bigram index (against scoring every entry), corrections, isolation between owners, the count cap and the
storage quota, and deletion leaving nothing behind."""

import redis

from shared.store.keys import Keys
from shared.store.memory_store import MemoryRefused, MemoryStore
from shared.text import memory_matching
from tests.stack import stack_settings

ENTRIES = {
    "今天北京的天气很好。": "The weather in Beijing is fine today.",
    "请在周五之前提交报告。": "Please submit the report by Friday.",
    "Please restart the server before noon.": "请在中午之前重启服务器。",
}


def make(redis_server, tmp_path, **overrides):
    settings = stack_settings(redis_server.url, tmp_path, **overrides)
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    return MemoryStore(client, Keys(settings.key_prefix), settings), client


def test_exact_and_fuzzy_lookups_and_owners_apart(redis_server, tmp_path):
    store, _ = make(redis_server, tmp_path)
    stored = store.create("alice", "m", "zh", "en", ENTRIES)
    assert stored.entries == 3 and store.get("alice", stored.id).pair == "zh-en"
    sentences = ["今天北京的天气很好。", "没有。", "今天上海的天气很好。"]
    assert store.exact("alice", [stored.id], sentences) == ["The weather in Beijing is fine today.", None, None]
    assert store.exact("bob", [stored.id], sentences) == [None, None, None]  # another owner's id finds nothing
    assert store.get("bob", stored.id) is None and store.list("bob") == []
    found = store.suggestions("alice", [stored.id], sentences[1:], 70)
    assert found[0] == []
    assert found[1] == [
        {"source": "今天北京的天气很好。", "target": "The weather in Beijing is fine today.", "score": 80.0}
    ]
    assert store.suggestions("alice", [stored.id], ["please restart the server before lunch."], 70)[0][0]["score"] > 70
    assert store.suggestions("bob", [stored.id], sentences[1:], 0) == [[], []]


def test_corrections_add_and_update_and_are_found(redis_server, tmp_path):
    store, _ = make(redis_server, tmp_path, memory_max_entries=4)
    stored = store.create("alice", "m", "zh", "en", ENTRIES)
    assert store.add(
        "alice", stored.id, {"今天北京的天气很好。": "Fine weather in Beijing today.", "新句子。": "New."}
    ) == (1, 1)
    assert store.exact("alice", [stored.id], ["今天北京的天气很好。", "新句子。"]) == [
        "Fine weather in Beijing today.",
        "New.",
    ]
    assert store.suggestions("alice", [stored.id], ["新的句子。"], 50)[0][0]["target"] == "New."
    assert store.get("alice", stored.id).entries == 4
    assert store.add("alice", stored.id, {"再一个。": "One more."}) == MemoryRefused("full", 4)
    assert store.add("alice", "0" * 32, {"再一个。": "One more."}) == MemoryRefused("missing")
    assert list(store.entries("alice", stored.id))[-1] == ("新句子。", "New.")


def test_cap_quota_and_delete(redis_server, tmp_path):
    store, client = make(redis_server, tmp_path, memory_max_stored=2, client_storage_bytes=4000)
    first = store.create("alice", "a", "zh", "en", ENTRIES)
    assert 256 < first.bytes < 4000
    usage = Keys("transq:").usage("alice")
    assert int(client.get(usage + ":bytes")) == first.bytes
    big = {f"句子{i}。": "x" * 100 for i in range(40)}
    refused = store.create("alice", "b", "zh", "en", big)
    assert isinstance(refused, MemoryRefused) and refused.reason == "over_quota" and refused.held == first.bytes
    second = store.create("alice", "b", "zh", "en", {"一。": "One."})
    assert store.create("alice", "c", "zh", "en", {"二。": "Two."}) == MemoryRefused("full")
    assert [m.id for m in store.list("alice")] == [first.id, second.id]
    assert store.delete("alice", first.id) and not store.delete("alice", first.id)
    assert int(client.get(usage + ":bytes")) == second.bytes
    assert not any(first.id in key for key in client.keys("*"))
    assert client.ttl(Keys("transq:").memory("alice", second.id) + ":g") > 0


def test_the_index_finds_what_scoring_every_entry_finds(redis_server, tmp_path):
    """On a memory of varied sentences, the index's best suggestion is the full scan's."""
    store, _ = make(redis_server, tmp_path)
    entries = {f"第{i}号会议讨论了项目{i * 7 % 13}的预算和进度安排。": f"Meeting {i}" for i in range(300)}
    entries.update({f"The build {i} failed because test {i * 3} timed out.": f"构建{i}" for i in range(300)})
    stored = store.create("alice", "m", "zh", "en", entries)
    queries = ["第17号会议讨论了项目2的预算安排。", "The build 42 failed because test 126 has timed out."]
    found = store.suggestions("alice", [stored.id], queries, 60)
    for query, suggestions in zip(queries, found):
        full = memory_matching.best(query, entries.items(), 60)
        assert suggestions[0] == full[0]


def test_use_renews_a_memory_and_its_account_entry(redis_server, tmp_path):
    store, client = make(redis_server, tmp_path, memory_ttl=1000)
    stored = store.create("alice", "m", "zh", "en", ENTRIES)
    base, usage = Keys("transq:").memory("alice", stored.id), Keys("transq:").usage("alice")
    for part in ("", ":x", ":e", ":g"):
        client.expire(base + part, 10)
    assert store.get("alice", stored.id) is not None  # as a job naming it does
    assert all(client.ttl(base + part) > 900 for part in ("", ":x", ":e", ":g"))
    (member, expiry), *_ = client.zrange(usage, 0, -1, withscores=True)
    assert member == f"{stored.id}:m:{stored.bytes}" and expiry > client.time()[0] + 900


def test_an_import_written_in_chunks_reads_back_whole(redis_server, tmp_path, monkeypatch):
    """An import is written a chunk per round trip (other requests run between: bench.memory_import), by fields
    and by bytes (a common bigram's posting list is long); what is read back is every entry, in order."""
    import shared.store.memory_store as memory_store

    monkeypatch.setattr(memory_store, "_CHUNK", 7)
    monkeypatch.setattr(memory_store, "_CHUNK_BYTES", 64)
    store, client = make(redis_server, tmp_path)
    entries = {f"今天北京的天气很好{n}号。": f"Fine weather, number {n}." for n in range(300)}
    stored = store.create("alice", "m", "zh", "en", entries)
    assert store.get("alice", stored.id).entries == 300
    assert list(store.entries("alice", stored.id)) == list(entries.items())
    assert store.exact("alice", [stored.id], ["今天北京的天气很好299号。"]) == ["Fine weather, number 299."]
    found = store.suggestions("alice", [stored.id], ["今天北京的天气很好299。"], 80)[0]
    assert found and found[0]["target"] == "Fine weather, number 299."
    assert all(client.ttl(key) > 0 for key in client.keys(f"*{stored.id}*"))
