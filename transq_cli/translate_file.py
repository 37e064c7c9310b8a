"""`transq translate FILE` and `transq status ID`: a file through the API, with a progress bar."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from transq_cli.client import TransqClient, TransqError

_PARAGRAPH_BREAK = re.compile(r"(\n\s*\n)")
# Files sent as documents (POST /v1/documents): they come back in the same format, markup untouched.
DOCUMENT_EXTENSIONS = {
    ".md",
    ".markdown",
    ".html",
    ".htm",
    ".srt",
    ".docx",
    ".xlsx",
    ".pptx",
    ".odt",
    ".po",
    ".pot",
    ".xlf",
    ".xliff",
    ".epub",
}
BINARY_EXTENSIONS = {
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".pptx": "pptx",
    ".odt": "odt",
    ".epub": "epub",
}  # written to a file, never to a terminal
# Formats the API does not translate (it answers 415): refused here before anything is sent.
UNTRANSLATED_EXTENSIONS = {".pdf", ".doc", ".rtf", ".xls", ".ppt"}
SUPPORTED = "text (.txt, or any UTF-8 text file, or - for standard input), " + ", ".join(sorted(DOCUMENT_EXTENSIONS))


def unsupported(path: Path, data: bytes) -> str:
    """Why a file is not sent as text ('' when it can be): a format the API does not translate, or bytes
    that are not UTF-8 text."""
    if path.suffix.lower() in UNTRANSLATED_EXTENSIONS:
        return f"{path.name}: transq does not translate {path.suffix.lower()} files; it translates {SUPPORTED}"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return f"{path.name}: not UTF-8 text; transq translates {SUPPORTED}"
    if "\x00" in text:
        return f"{path.name}: a binary file, not text; transq translates {SUPPORTED}"
    return ""


def split_paragraphs(text: str) -> tuple[list[str], list[str]]:
    """Paragraphs (non-empty) and the separators between them, so the file can be rebuilt."""
    parts = _PARAGRAPH_BREAK.split(text)
    return parts[0::2], parts[1::2]


def rebuild(paragraphs: list[str], separators: list[str]) -> str:
    out = [paragraphs[0]]
    for separator, paragraph in zip(separators, paragraphs[1:]):
        out += [separator, paragraph]
    return "".join(out)


def _progress_bar(job: dict[str, Any]) -> None:
    p = job["progress"]
    total = max(1, p["sentences_total"])
    filled = int(30 * p["sentences_done"] / total)
    sys.stderr.write(
        f"\r[{'#' * filled}{'.' * (30 - filled)}] {p['sentences_done']}/{p['sentences_total']} "
        f"sentences ({job['cached_sentences']} cached) {job['status']:<9}"
    )
    sys.stderr.flush()


def read_glossary(path: str) -> dict[str, str]:
    """A glossary file: a JSON object of terms, or one `source = target` per line as the web page takes
    them (a term alone on its line is kept as written; blank lines and lines starting with # are skipped)."""
    text = Path(path).read_text(encoding="utf-8")
    if text.lstrip().startswith("{"):
        try:
            terms = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{path}: not valid JSON: {exc}") from None
        if not isinstance(terms, dict):
            raise ValueError(f"{path}: a JSON glossary is an object of terms")
        return terms
    terms = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        source, equals, target = (part.strip() for part in line.partition("="))
        if not source or (equals and not target):
            raise ValueError(f"{path} line {number}: write `source = target`")
        terms[source] = target if equals else source
    return terms


def _follow(client: TransqClient, job_id: str) -> dict[str, Any]:
    """The job's events (GET /v1/jobs/<id>/events): each sentence printed to standard error as it arrives (its
    index, a tab, its translation), the status as it changes; its final view."""
    status = ""
    for kind, data in client.events(job_id):
        if kind == "sentence":
            sys.stderr.write(f"{data['index']}\t{data['translation']}\n")
        elif kind == "progress" and data["status"] != status:
            status = data["status"]
            sys.stderr.write(f"[{status}: {data['sentences_done']}/{data['sentences_total']} sentences]\n")
        elif kind == "done":
            return data
        sys.stderr.flush()
    raise TransqError(0, "unreachable", f"the event stream of job {job_id} ended before the job did")


def translate_file(args: argparse.Namespace) -> int:
    """A text file by paragraphs, or a document file (same format back), through the API."""
    client = TransqClient(args.url, args.api_key)
    paragraphs: list[str] | None = None
    separators: list[str] = []
    job_id = args.resume or ""
    try:
        if not job_id:
            if not args.file:
                sys.stderr.write("transq: give a FILE to translate or --resume JOB_ID\n")
                return 2
            options = {"glossary": read_glossary(args.glossary) if args.glossary else None}
            options["glossary_id"] = args.glossary_id
            options["translation_memory"] = args.memory
            path = Path(args.file)
            if path.suffix.lower() in DOCUMENT_EXTENSIONS and args.memory:
                sys.stderr.write("transq: --memory applies to plain text files, not documents\n")
                return 2
            if path.suffix.lower() in DOCUMENT_EXTENSIONS:
                if path.suffix.lower() in BINARY_EXTENSIONS and not args.output and sys.stdout.isatty():
                    sys.stderr.write(f"transq: a {path.suffix.lower()} translation is a file: write it with -o FILE\n")
                    return 2
                data = path.read_bytes()
                job = client.upload(path.name, data, source_lang=args.source, target_lang=args.target, **options)
            else:
                if args.file == "-":
                    text = sys.stdin.read()
                else:
                    data = path.read_bytes()
                    refused = unsupported(path, data)
                    if refused:
                        sys.stderr.write(f"transq: {refused}\n")
                        return 2
                    text = data.decode("utf-8-sig")
                paragraphs, separators = split_paragraphs(text)
                kept = [p for p in paragraphs if p.strip()]
                job = client.submit(kept, source_lang=args.source, target_lang=args.target, **options)
            job_id = job["id"]
            sys.stderr.write(f"job {job_id} (resume with: transq translate --resume {job_id})\n")
        job = _follow(client, job_id) if args.stream else client.wait(job_id, 24 * 3600, on_progress=_progress_bar)
        sys.stderr.write("\n")
        if job["status"] != "succeeded":
            error = job.get("error") or {"code": job["status"], "message": "the job did not succeed"}
            sys.stderr.write(f"transq: job {job_id} {job['status']}: {error['code']}: {error['message']}\n")
            return 1
        if job.get("document"):
            return _write(args.output, client.document(job_id), job["format"])
    except KeyboardInterrupt:
        sys.stderr.write(f"\ninterrupted; resume with: transq translate --resume {job_id}\n")
        return 130
    except (TransqError, OSError, TimeoutError, ValueError) as exc:
        sys.stderr.write(f"transq: {exc}\n")
        return 1
    translations = job["result"]["translations"]
    if paragraphs is None:
        output = "\n\n".join(translations)
    else:
        it = iter(translations)
        output = rebuild([next(it) if p.strip() else p for p in paragraphs], separators)
    return _write(args.output, output.encode("utf-8"), "text")


def _write(output: str | None, data: bytes, fmt: str) -> int:
    if output:
        Path(output).write_bytes(data)
    elif fmt in BINARY_EXTENSIONS.values() and sys.stdout.isatty():
        sys.stderr.write(f"transq: a .{fmt} translation is a file: write it with -o FILE\n")
        return 2
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0


def show_status(args: argparse.Namespace) -> int:
    client = TransqClient(args.url, args.api_key)
    try:
        job = client.job(args.job_id)
    except (TransqError, OSError) as exc:
        sys.stderr.write(f"transq: {exc}\n")
        return 1
    p = job["progress"]
    line = f"{job['id']} {job['status']} {p['sentences_done']}/{p['sentences_total']} sentences, {job['cached_sentences']} cached"
    if job.get("error"):
        line += f" — {job['error']['code']}: {job['error']['message']}"
    sys.stdout.write(line + "\n")
    return 0 if job["status"] != "failed" else 1
