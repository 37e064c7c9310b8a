"""RouteTable against a real Redis: which route serves a request's pair, from the routes and heartbeats
workers publish in the registry (shared.store.workers) and the API's own model."""

import time

import pytest

from shared.errors import UnsupportedLanguagePair
from shared.routing.route_table import REFRESH_SECONDS, RouteTable
from shared.routing.routes import Route
from shared.store.keys import Keys
from shared.store.workers import WorkerRegistry

OWN = Route("zh-en-own0000000", "/models/zh-en", "zh", "en")  # the API's configured model
OTHER_ZH_EN = Route("zh-en-beams00000", "/models/zh-en", "zh", "en")  # the same model, other settings
EN_ZH = Route("en-zh-0123456789", "/models/en-zh", "en", "zh")


@pytest.fixture
def registry(redis_client):
    return WorkerRegistry(redis_client, Keys(), ttl_seconds=60)


def table(registry, default_pair="zh-en"):
    return RouteTable(registry, OWN, default_pair)


def test_the_api_s_own_model_serves_before_any_worker_reports(registry):
    routes = table(registry)
    assert routes.choose(None, None) == routes.choose("zh", "en") == routes.choose("zh", None) == OWN
    assert routes.pairs()["zh-en"].view().model_dump() == {
        "source_lang": "zh",
        "target_lang": "en",
        "models": ["/models/zh-en"],
        "workers": 0,
    }


@pytest.mark.parametrize(
    "source, target, message",
    [
        ("fr", None, "no model translates from fr (target_lang was not given); served pairs: zh-en"),
        (None, "de", "no model translates into de (source_lang was not given); served pairs: zh-en"),
        ("en", "zh", "no model translates en to zh; served pairs: zh-en"),
    ],
)
def test_an_unserved_pair_is_refused_naming_the_served_ones(registry, source, target, message):
    with pytest.raises(UnsupportedLanguagePair) as refused:
        table(registry).choose(source, target)
    assert refused.value.message == message


def test_with_two_pairs_one_field_picks_the_pair_and_none_picks_the_default(registry):
    registry.beat("w1", {}, EN_ZH, "ns-en-zh")
    routes = table(registry)
    assert routes.choose("en", None) == routes.choose(None, "zh") == EN_ZH
    assert routes.choose(None, None) == OWN
    assert table(registry, default_pair="en-zh").choose(None, None) == EN_ZH
    with pytest.raises(UnsupportedLanguagePair) as refused:
        table(registry, default_pair="").choose(None, None)
    assert refused.value.message == "give source_lang and target_lang; served pairs: en-zh, zh-en"


def test_of_one_pair_s_routes_the_one_with_most_live_workers_wins_the_api_s_own_on_a_tie(registry):
    registry.beat("w1", {"decoding": "transq"}, OTHER_ZH_EN, "ns-beams")
    assert table(registry).choose("zh", "en") == OTHER_ZH_EN
    registry.beat("w2", {"decoding": "generate"}, OWN, "ns-own")
    routes = table(registry)
    assert routes.choose("zh", "en") == OWN
    assert routes.pairs()["zh-en"].view().workers == 2
    assert routes.decoding == {"transq": 1, "generate": 1}
    registry.leave("w2")
    assert table(registry).choose("zh", "en") == OTHER_ZH_EN  # a worker gone no longer counts


def test_a_route_s_cache_namespace_is_the_one_its_workers_publish(registry):
    routes = table(registry)
    assert routes.cache_namespace(EN_ZH.key) is None
    registry.beat("w1", {}, EN_ZH, "ns-en-zh")
    assert routes.cache_namespace(EN_ZH.key) is None  # remembered until the next refresh
    time.sleep(REFRESH_SECONDS + 0.1)
    routes.pairs()
    assert routes.cache_namespace(EN_ZH.key) == "ns-en-zh"


def test_a_pair_announced_later_is_served_after_the_refresh(registry):
    routes = table(registry)
    started = time.monotonic()
    routes.pairs()
    registry.beat("w1", {}, EN_ZH, "ns-en-zh")
    if time.monotonic() - started < REFRESH_SECONDS:
        assert "en-zh" not in routes.pairs()  # read at most every REFRESH_SECONDS
    time.sleep(REFRESH_SECONDS + 0.1)
    assert routes.choose("en", "zh") == EN_ZH
