"""Sentence confidences in the stores, against a real Redis: beside their translations in the sentence cache,
in a running job's partial hash (so a parked or taken-over job keeps them), and in a finished job's record."""

from shared.store.job_claims import Claimant, JobClaims, Progress
from shared.store.jobs import JobStore, Translation
from shared.store.keys import Keys
from shared.store.sentence_cache import SentenceCache
from tests.shared.test_jobs import ROUTE, make_job


def test_a_score_is_cached_beside_its_translation_with_the_same_ttl(redis_client):
    cache = SentenceCache(redis_client, Keys(), ttl_seconds=60)
    assert cache.put_many("ns", {"你好。": "Hello.", "再见。": "Bye."}, {"你好。": -0.25})
    assert cache.get_many("ns", ["你好。", "再见。"]) == ["Hello.", "Bye."]
    assert cache.scores_each(["ns", "ns", "other"], ["你好。", "再见。", "你好。"]) == [-0.25, None, None]
    keys = redis_client.keys("transq:c:*")
    assert len(keys) == 3
    for key in keys:
        assert 0 < redis_client.ttl(key) <= 60


def test_scores_are_unknown_when_the_cache_is_down():
    import redis

    client = redis.Redis(host="127.0.0.1", port=1, socket_timeout=0.1, socket_connect_timeout=0.1)
    assert SentenceCache(client, Keys(), ttl_seconds=60).scores_each(["ns"], ["a"]) == [None]


def test_progress_keeps_scores_apart_from_translations_and_a_resumed_job_reads_both(redis_client):
    store = JobStore(redis_client, Keys(), job_ttl=100, result_ttl=50)
    claims = JobClaims(redis_client, Keys(), job_ttl=100, result_ttl=50)
    job = make_job(store)
    fence = claims.claim(job.id, Claimant(ROUTE, "w1", 5, 3)).fence
    claims.set_progress(job.id, fence, Progress(2, 0, {0: "one", 1: "two"}, scores={0: -0.5}))
    assert claims.park(job.id, ROUTE, "w1", fence)
    again = claims.claim(job.id, Claimant(ROUTE, "w2", 5, 3), fresh_only=True)
    assert claims.partial_progress([job.id]) == [({0: "one", 1: "two"}, {0: -0.5})]
    assert claims.partial_translations([job.id]) == [{0: "one", 1: "two"}]  # the score fields are skipped
    store.translated(job, again.fence, Translation(["one two"], 2, 0, scores=[[-0.5, None]]))
    assert store.get(job.id).scores == [[-0.5, None]]


def test_a_job_without_scores_stores_none():
    from shared.store.job_record import Job

    job = Job(id="a" * 32, status="queued", texts=["x"], model="m", created_at="", sentences_total=1)
    data = job.to_hash()
    assert "want_scores" not in data and "scores" not in data
    assert Job.from_hash(data).scores is None and not Job.from_hash(data).want_scores
    wanted = Job.from_hash({**data, **Job(**{**job.__dict__, "want_scores": True}).to_hash()})
    assert wanted.want_scores and wanted.scores is None
