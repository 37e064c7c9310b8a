"""Stored glossaries through a real API process (gunicorn, real Redis): create, list, read, delete, owned by
the API key like jobs, with limits on size and count and errors naming the field; the glossary a translation
request asks for; their OpenAPI description."""

import concurrent.futures

import pytest
import requests

from devstack.redis_server import RedisServer
from tests.stack import ApiProcess, stack_settings

ALICE, BOB = {"X-API-Key": "alice-key"}, {"Authorization": "Bearer bob-key"}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("glossaries")
    with RedisServer() as server:
        settings = stack_settings(
            server.url,
            tmp / "no-model",
            api_keys="alice-key,bob-key",
            glossary_max_terms=4,
            glossary_max_term_chars=20,
            glossary_max_stored=3,
        )
        process = ApiProcess(settings, tmp / "api.log").start()
        try:
            yield process.url
        finally:
            process.stop()


@pytest.fixture
def clean(api):
    """Delete both keys' glossaries after the test."""
    yield
    for headers in (ALICE, BOB):
        for found in requests.get(api + "/v1/glossaries", headers=headers, timeout=5).json()["glossaries"]:
            requests.delete(f"{api}/v1/glossaries/{found['id']}", headers=headers, timeout=5)


def error(response, status):
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    return body["error"]["code"], body["error"]["message"]


def test_create_list_read_and_delete(api, clean):
    terms = {"北京": "Beijing", " GitHub ": "GitHub"}
    created = requests.post(api + "/v1/glossaries", json={"name": "places", "terms": terms}, headers=ALICE, timeout=5)
    assert created.status_code == 201, created.text
    glossary = created.json()
    assert created.headers["Location"] == f"/v1/glossaries/{glossary['id']}"
    assert glossary["name"] == "places" and glossary["terms"] == {"GitHub": "GitHub", "北京": "Beijing"}
    assert glossary["term_count"] == 2 and len(glossary["digest"]) == 32
    listed = requests.get(api + "/v1/glossaries", headers=ALICE, timeout=5).json()["glossaries"]
    assert listed == [{k: v for k, v in glossary.items() if k != "terms"}]
    assert requests.get(api + created.headers["Location"], headers=ALICE, timeout=5).json() == glossary
    assert requests.delete(api + created.headers["Location"], headers=ALICE, timeout=5).status_code == 204
    assert error(requests.get(api + created.headers["Location"], headers=ALICE, timeout=5), 404)[0] == "not_found"
    assert requests.get(api + "/v1/glossaries", headers=ALICE, timeout=5).json() == {"glossaries": []}


def test_the_same_terms_in_another_order_have_the_same_digest(api, clean):
    one = requests.post(api + "/v1/glossaries", json={"terms": {"a": "1", "b": "2"}}, headers=ALICE, timeout=5)
    two = requests.post(api + "/v1/glossaries", json={"terms": {"b": "2", "a": "1"}}, headers=ALICE, timeout=5)
    assert one.json()["digest"] == two.json()["digest"] and one.json()["id"] != two.json()["id"]


def test_a_glossary_belongs_to_the_key_that_stored_it(api, clean):
    created = requests.post(api + "/v1/glossaries", json={"terms": {"秘密": "secret"}}, headers=ALICE, timeout=5)
    url = api + created.headers["Location"]
    unknown = f"{api}/v1/glossaries/{'0' * 32}"
    for method in ("GET", "DELETE"):
        other = requests.request(method, url, headers=BOB, timeout=5)
        missing = requests.request(method, unknown, headers=BOB, timeout=5)
        assert other.status_code == missing.status_code == 404, method
        assert other.text == missing.text  # says nothing more
    assert requests.get(api + "/v1/glossaries", headers=BOB, timeout=5).json() == {"glossaries": []}
    assert requests.get(url, headers=ALICE, timeout=5).json()["terms"] == {"秘密": "secret"}  # Bob deleted nothing
    assert error(requests.get(api + "/v1/glossaries", timeout=5), 401)[0] == "unauthorized"


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({"name": "x"}, "terms is required"),
        ({"terms": {}}, "terms must not be empty"),
        ({"terms": ["北京"]}, "terms must be an object"),
        ({"terms": {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}}, "terms has 5 terms; at most 4"),
        ({"terms": {"北京": ""}}, 'terms["北京"] is empty'),
        ({"terms": {"北京": 1}}, 'terms["北京"] must be a string'),
        ({"terms": {"北京": "B" * 21}}, "21 characters; at most 20"),
        ({"terms": {"a": "x"}, "name": 3}, "name must be a string"),
        ({"terms": {"a": "x"}, "owner": "bob"}, "unknown field `owner`"),
    ],
)
def test_a_bad_glossary_is_422_naming_the_field(api, clean, body, fragment):
    code, message = error(requests.post(api + "/v1/glossaries", json=body, headers=ALICE, timeout=5), 422)
    assert code == "validation_error" and fragment in message, message
    assert requests.get(api + "/v1/glossaries", headers=ALICE, timeout=5).json() == {"glossaries": []}


def test_bodies_that_are_not_json_objects(api, clean):
    bad = requests.post(api + "/v1/glossaries", data=b"{nope", headers={**ALICE, "Content-Type": "application/json"})
    assert error(bad, 400)[0] == "invalid_json"
    assert error(requests.post(api + "/v1/glossaries", data=b"x", headers=ALICE, timeout=5), 415)[0]
    assert error(requests.post(api + "/v1/glossaries", json=[1], headers=ALICE, timeout=5), 422)[0]


def test_the_count_per_key_holds_under_concurrent_creations(api, clean):
    def create(i):
        return requests.post(api + "/v1/glossaries", json={"terms": {f"词{i}": f"w{i}"}}, headers=ALICE, timeout=10)

    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        responses = list(pool.map(create, range(10)))
    assert sorted(r.status_code for r in responses) == [201] * 3 + [409] * 7
    assert "TRANSQ_GLOSSARY_MAX_STORED" in error(next(r for r in responses if r.status_code == 409), 409)[1]
    assert len(requests.get(api + "/v1/glossaries", headers=ALICE, timeout=5).json()["glossaries"]) == 3
    assert requests.post(api + "/v1/glossaries", json={"terms": {"a": "b"}}, headers=BOB, timeout=5).status_code == 201


# The glossary of a translation request (api.glossaries.with_glossary), on the app and a real Redis ----------


def test_a_request_glossary_adds_its_terms_to_the_stored_one_of_its_key(make_app):
    from api.glossaries import with_glossary
    from api.validation import parse_translation_request
    from shared.contract import JobRequest
    from shared.errors import NotFound, ValidationError
    from shared.store.key_ids import KeyIds

    app = make_app(api_keys="alice-key,bob-key", glossary_max_terms=3)
    settings = app.extensions["transq"].settings
    stored = app.test_client().post(
        "/v1/glossaries", json={"terms": {"北京": "Peking", "上海": "Shanghai"}}, headers=ALICE
    )
    gid = stored.get_json()["id"]

    def glossary_of(fields: dict, key: str) -> dict | None:
        return with_glossary(parse_translation_request({"texts": ["x"], **fields}, settings), key).glossary

    with app.test_request_context():
        services = app.extensions["transq"]
        key = KeyIds(services.redis, services.keys).of("alice-key")  # the secret the app made in the broker
        assert glossary_of({}, key) is None
        assert glossary_of({"glossary": {"北京": "Beijing"}}, key) == {"北京": "Beijing"}
        assert glossary_of({"glossary_id": gid, "glossary": {"北京": "Beijing"}}, key) == {
            "上海": "Shanghai",
            "北京": "Beijing",
        }
        for fields, fragment in [
            ({"glossary_id": gid, "glossary": {"a": "1", "b": "2"}}, "4 terms together; at most 3"),
            ({"glossary_id": "../x"}, "glossary_id must be the id"),
            ({"glossary": {"北京": ""}}, 'glossary["北京"] is empty'),
            ({"glossary": ["北京"]}, "glossary must be an object"),
        ]:
            with pytest.raises(ValidationError) as caught:
                glossary_of(fields, key)
            assert fragment in caught.value.message
        with pytest.raises(NotFound, match="names no glossary of this API key"):
            glossary_of({"glossary_id": gid}, "key:" + "0" * 32)  # another key's id
    assert JobRequest.model_json_schema()["properties"]["glossary"]["type"] == "object"


def test_the_glossary_operations_are_in_the_generated_document(client):
    from openapi_spec_validator import validate

    spec = client.get("/openapi.json").get_json()
    validate(spec)
    assert {"post", "get"} <= set(spec["paths"]["/v1/glossaries"])
    assert {"get", "delete"} <= set(spec["paths"]["/v1/glossaries/{glossary_id}"])
    assert {"glossary", "glossary_id"} <= set(spec["components"]["schemas"]["JobRequest"]["properties"])
