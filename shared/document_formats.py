"""The document formats transq translates: their names, file extensions and media types, what each
format's parse errors are, and how an uploaded text file is decoded. The API checks uploads with these; the
document stage (worker.documents.formats) parses and renders each format."""

from __future__ import annotations

import codecs

FORMATS = ("text", "html", "markdown", "srt", "docx", "xlsx", "pptx", "odt", "po", "xliff", "epub")
TEXT_FORMATS = ("text", "html", "markdown", "srt")  # the formats a JSON string can carry
# The formats uploaded and stored as bytes (parsed by their own libraries, each reading its own encoding); the
# job's result is then only the file to download. Zip archives among them are checked as such at upload.
FILE_FORMATS = ("docx", "xlsx", "pptx", "odt", "po", "xliff", "epub")
ZIP_FORMATS = ("docx", "xlsx", "pptx", "odt", "epub")
# The translators' formats: a unit already translated is kept unless the upload asks `retranslate=true`.
TRANSLATOR_FORMATS = ("po", "xliff")
EXTENSIONS = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".srt": "srt",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".pptx": "pptx",
    ".odt": "odt",
    ".po": "po",
    ".pot": "po",
    ".xlf": "xliff",
    ".xliff": "xliff",
    ".epub": "epub",
}
FILE_EXTENSIONS = {
    "text": ".txt",
    "html": ".html",
    "markdown": ".md",
    "srt": ".srt",
    "docx": ".docx",
    "xlsx": ".xlsx",
    "pptx": ".pptx",
    "odt": ".odt",
    "po": ".po",
    "xliff": ".xlf",
    "epub": ".epub",
}
MEDIA_TYPES = {
    "text": "text/plain; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "markdown": "text/markdown; charset=utf-8",
    "srt": "application/x-subrip; charset=utf-8",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "odt": "application/vnd.oasis.opendocument.text",
    "po": "text/x-gettext-translation",  # no charset: the file declares its own (its header's Content-Type)
    "xliff": "application/xliff+xml",  # and its own XML declaration
    "epub": "application/epub+zip",
}


class DocumentError(ValueError):
    """The file is not a well-formed document of its format (the API answers 422 `invalid_document`)."""


class DocumentTooComplex(DocumentError):
    """The document is over a limit on what reading it may cost (422 `document_too_complex`)."""


def decode_text(data: bytes) -> str:
    """UTF-8 (a byte-order mark allowed), or UTF-16 with its byte-order mark."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise DocumentError("the file is not valid UTF-16 text") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"the file is not UTF-8 text (byte {exc.start})") from None
