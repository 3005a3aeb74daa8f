"""JSON localisation files (.json) through the standard library: keys and their order kept,
string values translated (i18n_strings.py), other values untouched.

The output is UTF-8 without `\\u` escapes, indented as the input was (the indentation of its
first indented line, spaces or a tab; compact when the input was on one line), with the
input's final newline. Other whitespace is not kept, nor duplicate keys (JSON readers keep
the last one; so does the output).
"""
from __future__ import annotations

import json
import re

from hymt.documents.i18n_strings import Codec, StringTreeDocument
from hymt.documents.safety import check_size
from hymt.documents.units import DocumentFormat
from hymt.errors import InvalidDocumentError

NAME = "json"
MEDIA_TYPE = "application/json"
_INDENT = re.compile(r"\n([ \t]+)\S")


class JsonCodec(Codec):
    name = NAME

    def load(self, data: bytes) -> object:
        check_size(data, NAME)
        try:
            return json.loads(data)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise InvalidDocumentError(f"{NAME}: the file is not valid JSON: {exc}", field="file") from exc

    def dump(self, tree: object, data: bytes) -> bytes:
        text = data.decode("utf-8-sig", errors="replace")
        match = _INDENT.search(text)
        indent: str | None = None
        if match:
            indent = "\t" if match.group(1).startswith("\t") else match.group(1)
        separators = (",", ": ") if indent is not None or re.search(r":\s", text) else (",", ":")
        if indent is None and re.search(r",\s", text):
            separators = (", ", separators[1])
        out = json.dumps(tree, ensure_ascii=False, indent=indent, separators=separators)
        return (out + ("\n" if text.endswith("\n") else "")).encode("utf-8")


def parse(data: bytes) -> StringTreeDocument:
    return StringTreeDocument(data, JsonCodec())


FORMAT = DocumentFormat(name=NAME, suffixes=(".json",), media_type=MEDIA_TYPE, parse=parse, text=True)
