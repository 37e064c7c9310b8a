"""GET /openapi.json is a valid OpenAPI 3 document that covers every route."""

from openapi_spec_validator import validate


def test_spec_is_valid_and_covers_every_route(make_app):
    app = make_app()
    client = app.test_client()
    spec = client.get("/openapi.json").get_json()
    validate(spec)
    documented = set(spec["paths"])
    for rule in app.url_map.iter_rules():
        path = rule.rule.replace("<job_id>", "{job_id}")
        if path.startswith(("/static", "/docs")) or path == "/":
            continue
        assert "<" not in path, path
        assert path in documented, f"{path} is not in the OpenAPI document"
    for code in ("400", "401", "413", "415", "422", "429", "503"):
        assert code in spec["paths"]["/v1/jobs"]["post"]["responses"]


def test_document_job_bodies_match_the_job_schema(client):
    from openapi_schema_validator import OAS30Validator

    from tests.api.documents import samples

    spec = client.get("/openapi.json").get_json()
    schema = {**spec["components"]["schemas"]["Job"], "components": spec["components"]}
    job = client.post("/v1/jobs", json={"texts": [samples.SRT], "format": "srt"}).get_json()
    OAS30Validator(schema).validate(job)
    assert job["format"] == "srt" and "download" in job["document"]


def test_docs_page_is_served_locally(client):
    page = client.get("/docs")
    assert page.status_code == 200 and b"/openapi.json" in page.data
    assert b"http" not in page.data.split(b"/openapi.json")[0].split(b"<script")[-1]  # no CDN
    assert client.get("/docs/static/swagger-ui-bundle.js").status_code == 200


def test_web_page_has_two_panes(client):
    page = client.get("/").get_data(as_text=True)
    assert 'id="source"' in page and 'id="target"' in page and 'id="translate"' in page
    assert client.get("/static/app.js").status_code == 200
