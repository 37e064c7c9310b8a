"""The one error of document parsing."""


class DocumentError(ValueError):
    """The file is not a well-formed document of its format (the API answers 422 `invalid_document`)."""
