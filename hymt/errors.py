"""Errors hymt raises on purpose. Every message names the field and the valid values."""
from __future__ import annotations


class HymtError(Exception):
    """Base class of every error hymt raises deliberately."""


class InvalidInputError(HymtError, ValueError):
    """A caller passed a value hymt cannot use (empty text, bad option, wrong type).

    `field` names the offending argument so servers can report it.
    """

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.field = field


class UnknownLanguageError(InvalidInputError):
    """A language code or name outside the 38 the models support."""


class UnsupportedTemplateError(InvalidInputError):
    """A prompt template the chosen model family does not support."""


class ModelLoadError(HymtError):
    """A checkpoint could not be found, downloaded or understood."""


class EngineError(HymtError):
    """The engine could not serve a request (out of memory, bad configuration, aborted)."""


class InvalidDocumentError(InvalidInputError):
    """A document that cannot be read as its format: corrupt, encrypted, over a limit, or of
    an unsupported type. The message names the format and what is wrong with the file."""
