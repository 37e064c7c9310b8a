"""GET /openapi.json is a valid OpenAPI 3 document that covers every route."""

import re

from openapi_spec_validator import validate


def test_spec_is_valid_and_covers_every_route(make_app):
    app = make_app()
    client = app.test_client()
    spec = client.get("/openapi.json").get_json()
    validate(spec)
    documented = set(spec["paths"])
    for rule in app.url_map.iter_rules():
        path = re.sub(r"<(\w+)>", r"{\1}", rule.rule)
        if path.startswith(("/static", "/docs")) or path == "/":
            continue
        assert "<" not in path, path
        assert path in documented, f"{path} is not in the OpenAPI document"
    for code in ("400", "401", "413", "415", "422", "429", "503"):
        assert code in spec["paths"]["/v1/jobs"]["post"]["responses"]


def conforms(spec, name, body):
    """Validate `body` against the component schema `name` of the generated document."""
    from openapi_schema_validator import OAS31Validator

    OAS31Validator({**spec["components"]["schemas"][name], "components": spec["components"]}).validate(body)


def test_job_and_error_bodies_match_their_schemas(client):
    from tests.api.documents import samples

    spec = client.get("/openapi.json").get_json()
    assert spec["openapi"].startswith("3.1")
    job = client.post("/v1/jobs", json={"texts": [samples.SRT], "format": "srt"}).get_json()
    conforms(spec, "JobView", job)
    assert job["format"] == "srt" and "download" in job["document"]
    plain = client.post("/v1/jobs", json={"text": "你好。"}).get_json()
    conforms(spec, "JobView", plain)
    assert plain["started_at"] is None and "document" not in plain and "result" not in plain
    cancelled = client.delete(f"/v1/jobs/{plain['id']}").get_json()
    conforms(spec, "JobView", cancelled)
    conforms(spec, "ErrorBody", client.post("/v1/jobs", json={"texts": ["好", ""]}).get_json())
    conforms(spec, "Health", client.get("/healthz").get_json())
    conforms(spec, "ServedLanguages", client.get("/v1/languages").get_json())


def test_the_settings_limits_and_served_pairs_are_in_the_schemas(make_app):
    spec = make_app(max_texts=7, max_chars=99, wait_timeout=12).test_client().get("/openapi.json").get_json()
    request = spec["components"]["schemas"]["TranslateRequest"]["properties"]
    assert request["texts"]["maxItems"] == 7 and request["text"]["maxLength"] == 99
    assert request["timeout"]["maximum"] == 12
    assert request["source_lang"]["enum"] == ["zh", "auto"] and request["target_lang"]["enum"] == ["en"]
    form = spec["components"]["schemas"]["DocumentForm"]["properties"]
    assert form["source_lang"]["enum"] == ["zh"]  # a document's language is not detected (yet)


def test_docs_page_is_served_locally(client):
    page = client.get("/docs")
    assert page.status_code == 200 and b"/openapi.json" in page.data
    assert b"http" not in page.data.split(b"/openapi.json")[0].split(b"<script")[-1]  # no CDN
    assert client.get("/docs/static/swagger-ui-bundle.js").status_code == 200


def test_web_page_has_two_panes(client):
    page = client.get("/").get_data(as_text=True)
    assert 'id="source"' in page and 'id="target"' in page and 'id="translate"' in page
    assert client.get("/static/app.js").status_code == 200
