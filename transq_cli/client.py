"""A small HTTP client for the transq API; the CLI and the tests use it."""

from __future__ import annotations

import json
import time
from typing import Any, Callable

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry


class TransqError(RuntimeError):
    """The API answered with an error body."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{code}: {message}" + (f" (HTTP {status})" if status else ""))
        self.status = status
        self.code = code
        self.message = message


class TransqClient:
    def __init__(self, url: str = "http://127.0.0.1:8080", api_key: str | None = None, timeout: float = 30.0):
        self.url = url.rstrip("/")
        self.session = requests.Session()
        # A kept-alive connection the server just closed resets; reads are safe to send again, submissions are not.
        retry = Retry(total=3, connect=3, read=2, status=0, backoff_factor=0.1, allowed_methods={"GET", "DELETE"})
        self.session.mount("http://", HTTPAdapter(max_retries=retry))
        self.session.mount("https://", HTTPAdapter(max_retries=retry))
        self.timeout = timeout
        if api_key:
            self.session.headers["Authorization"] = f"Bearer {api_key}"

    def _call(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        try:
            response = self.session.request(method, self.url + path, timeout=self.timeout, **kwargs)
        except requests.ConnectionError:
            raise TransqError(0, "unreachable", f"cannot reach the transq API at {self.url}") from None
        except requests.Timeout:
            raise TransqError(0, "timeout", f"the transq API at {self.url} did not answer in time") from None
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400:
            error = (body or {}).get("error", {}) if isinstance(body, dict) else {}
            raise TransqError(
                response.status_code, error.get("code", "http_error"), error.get("message", response.text[:200])
            )
        return response.status_code, body

    def submit(
        self,
        texts: list[str],
        idempotency_key: str | None = None,
        source_lang: str | None = None,
        target_lang: str | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Submit a job; the pair may be left out where the service serves one. `options`: any other field
        of the request (glossary, glossary_id, scores…); None ones are left out."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        body: dict[str, Any] = {"texts": texts}
        body.update({k: v for k, v in (("source_lang", source_lang), ("target_lang", target_lang)) if v})
        body.update({k: v for k, v in options.items() if v is not None})
        return self._call("POST", "/v1/jobs", json=body, headers=headers)[1]

    def upload(
        self,
        filename: str,
        data: bytes,
        source_lang: str | None = None,
        target_lang: str | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Submit a document file (POST /v1/documents); its format comes from the file name. `options` as
        submit's, sent as form fields (a glossary as JSON text)."""
        fields = {k: v for k, v in (("source_lang", source_lang), ("target_lang", target_lang)) if v}
        for name, value in options.items():
            if value is not None:
                fields[name] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return self._call("POST", "/v1/documents", files={"file": (filename, data)}, data=fields)[1]

    def document(self, job_id: str) -> bytes:
        """The translated document of a succeeded document job."""
        try:
            response = self.session.get(f"{self.url}/v1/jobs/{job_id}/document", timeout=self.timeout)
        except requests.RequestException as exc:
            raise TransqError(0, "unreachable", f"cannot reach the transq API at {self.url}: {exc}") from None
        if response.status_code != 200:
            self._call("GET", f"/v1/jobs/{job_id}/document")  # raises with the error body
        return response.content

    def import_memory(
        self, filename: str, data: bytes, source_lang: str, target_lang: str, name: str | None = None
    ) -> dict[str, Any]:
        """Store a translation memory file (TMX, TSV or CSV: its name's extension) for a pair (POST /v1/memories)."""
        fields = {"source_lang": source_lang, "target_lang": target_lang, **({"name": name} if name else {})}
        return self._call("POST", "/v1/memories", files={"file": (filename, data)}, data=fields)[1]

    def memories(self) -> list[dict[str, Any]]:
        return self._call("GET", "/v1/memories")[1]["memories"]

    def export_memory(self, memory_id: str) -> bytes:
        """A stored translation memory as TMX 1.4."""
        try:
            response = self.session.get(f"{self.url}/v1/memories/{memory_id}", timeout=self.timeout)
        except requests.RequestException as exc:
            raise TransqError(0, "unreachable", f"cannot reach the transq API at {self.url}: {exc}") from None
        if response.status_code != 200:
            self._call("GET", f"/v1/memories/{memory_id}")  # raises with the error body
        return response.content

    def delete_memory(self, memory_id: str) -> None:
        self._call("DELETE", f"/v1/memories/{memory_id}")

    def correct(self, job_id: str, memory_id: str, corrections: dict[int, str]) -> dict[str, Any]:
        """Store a job's corrected sentences (index -> target) in a memory (POST /v1/jobs/<id>/corrections)."""
        body = {"translation_memory": memory_id, "corrections": {str(i): t for i, t in corrections.items()}}
        return self._call("POST", f"/v1/jobs/{job_id}/corrections", json=body)[1]

    def detect(self, texts: list[str]) -> list[dict[str, Any]]:
        """Each text's {"language", "confidence"} (POST /v1/detect)."""
        return self._call("POST", "/v1/detect", json={"texts": texts})[1]["detections"]

    def languages(self) -> list[dict[str, Any]]:
        return self._call("GET", "/v1/languages")[1]["pairs"]

    def job(self, job_id: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/jobs/{job_id}")[1]

    def cancel(self, job_id: str) -> dict[str, Any]:
        return self._call("DELETE", f"/v1/jobs/{job_id}")[1]

    def wait(
        self,
        job_id: str,
        timeout: float = 600.0,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
        interval: float = 0.1,
    ) -> dict[str, Any]:
        """Poll until the job is final; raise TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            if on_progress:
                on_progress(job)
            if job["status"] in ("succeeded", "failed", "cancelled"):
                return job
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {job['status']} after {timeout:.0f}s")
            time.sleep(interval)
            interval = min(interval * 1.3, 1.0)
