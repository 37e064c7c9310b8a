"""The errors of document parsing."""


class DocumentError(ValueError):
    """The file is not a well-formed document of its format (the API answers 422 `invalid_document`)."""


class DocumentTooComplex(DocumentError):
    """The document is over a limit on what reading it may cost (422 `document_too_complex`)."""
