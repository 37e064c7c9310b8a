import redis

from shared.store.keys import Keys
from shared.store.sentence_cache import SentenceCache, namespace_for, normalise, sentence_digest


def test_normalisation_is_conservative():
    assert normalise("  e\u0301  tu  \t es\n") == "\u00e9 tu es"
    assert normalise("你好。") != normalise("你好！")
    assert sentence_digest("你好 。") == sentence_digest(" 你好\u3000。")


def test_namespace_changes_with_every_setting():
    base = {"model": "m", "revision": "r1", "num_beams": 4, "max_new_tokens": 256, "quantization": "int8"}
    spaces = {namespace_for(base)}
    for change in (
        {"revision": "r2"},
        {"num_beams": 1},
        {"max_new_tokens": 128},
        {"quantization": "none"},
        {"model": "other"},
    ):
        spaces.add(namespace_for({**base, **change}))
    assert len(spaces) == 6


def test_entries_have_ttls_and_one_mget(redis_client):
    cache = SentenceCache(redis_client, Keys(), ttl_seconds=60)
    assert cache.put_many("ns", {"你好。": "Hello.", "再见。": "Bye."})
    assert cache.get_many("ns", ["你好。", "新的。", "再见。"]) == ["Hello.", None, "Bye."]
    assert cache.get_many("other", ["你好。"]) == [None]
    for key in redis_client.keys("transq:c:*"):
        assert 0 < redis_client.ttl(key) <= 60


def test_cache_down_is_a_miss_not_an_error():
    client = redis.Redis(host="127.0.0.1", port=1, socket_timeout=0.1, socket_connect_timeout=0.1)
    cache = SentenceCache(client, Keys(), ttl_seconds=60)
    assert cache.get_many("ns", ["a", "b"]) == [None, None]
    assert cache.put_many("ns", {"a": "A"}) is False


def test_one_lookup_answers_every_jobs_question_in_its_namespace(redis_client):
    """SentenceCache.answers (the API's, the document stage's and the worker's one lookup): a job without a
    glossary asks the plain namespace, a sentence a glossary term matches asks the glossary's own; a sentence
    two jobs ask is read once; scores only of what was found, only for a job that wants them."""
    from shared.store.sentence_cache import Question
    from shared.text.glossary import Glossary

    cache = SentenceCache(redis_client, Keys("t:"), ttl_seconds=60)
    glossary = Glossary.of({"北京": "Peking"})
    own = glossary.cache_namespaces("ns", ["我在北京。"])[0]
    cache.put_many("ns", {"你好。": "Hello.", "我在北京。": "I am in Beijing."}, {"你好。": -0.25})
    cache.put_many(own, {"我在北京。": "I am in Peking."})
    first, second, plain = cache.answers(
        [
            Question("ns", ["你好。", "我在北京。", "新的。"], glossary, scores=True),
            Question("ns", ["你好。"]),
            Question("ns", ["我在北京。"], None, scores=True),
        ]
    )
    assert first.namespaces == ["ns", own, "ns"] and plain.namespaces == ["ns"]
    assert first.translations == ["Hello.", "I am in Peking.", None] and first.hits == 2 and not first.complete
    assert first.scores == [-0.25, None, None] and second.scores is None and second.complete
    assert plain.translations == ["I am in Beijing."] and plain.scores == [None]
    assert cache.answer("ns", [], glossary, scores=True) == first.__class__([], [], [])
