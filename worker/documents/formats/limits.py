"""What a document may cost to read: its markup parts are counted while it is parsed (a document with more
is refused with 422 `document_too_complex`, before the work grows), and a Word file's unpacked size is
capped in proportion to its upload before anything is unpacked."""

from __future__ import annotations

from dataclasses import dataclass

from shared.document_formats import DocumentTooComplex

MIB = 1 << 20


@dataclass(frozen=True)
class DocumentLimits:
    max_parts: int = 50_000  # tags, paragraphs, Word runs, table cells, subtitles: TRANSQ_MAX_DOCUMENT_PARTS
    docx_unpacked_base: int = 32 * MIB  # TRANSQ_DOCX_UNPACKED_BASE_MB
    docx_unpacked_ratio: int = 20  # TRANSQ_DOCX_UNPACKED_RATIO

    @classmethod
    def from_settings(cls, settings) -> DocumentLimits:  # type: ignore[no-untyped-def]
        return cls(settings.max_document_parts, settings.docx_unpacked_base_mb * MIB, settings.docx_unpacked_ratio)

    @classmethod
    def from_env(cls) -> DocumentLimits:
        from shared.settings import Settings

        return cls.from_settings(Settings.from_env())

    def docx_unpacked_limit(self, upload_bytes: int) -> int:
        """The most bytes a .docx of `upload_bytes` may unpack to (all its parts together)."""
        return self.docx_unpacked_base + self.docx_unpacked_ratio * upload_bytes


class Budget:
    """The parts one document may still have; spent while it is parsed."""

    def __init__(self, limits: DocumentLimits):
        self.limit = limits.max_parts
        self.left = limits.max_parts

    def spend(self, count: int = 1) -> None:
        self.left -= count
        if self.left < 0:
            raise DocumentTooComplex(
                f"the document has more than {self.limit} parts (tags, paragraphs, Word runs, table cells or "
                f"subtitles); at most TRANSQ_MAX_DOCUMENT_PARTS={self.limit} are read"
            )
