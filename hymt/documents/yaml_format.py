"""YAML localisation files (.yaml, .yml) through ruamel.yaml's round trip: comments, key
order, quoting and block styles, anchors and aliases are kept; string values translated
(i18n_strings.py), other values untouched. An aliased string is one unit, and every place
naming it gets its translation.

The indentation is guessed from the input (ruamel.yaml's own guess). A translated folded
(`>`) string loses where its lines were folded; long translated strings are not re-wrapped.
Files of several documents (`---`) are read and written as several documents. ruamel.yaml's
round-trip loader builds no Python objects from tags, so a file cannot make hymt run code.
"""
from __future__ import annotations

import io
import re

from ruamel.yaml import YAML, YAMLError
from ruamel.yaml.scalarstring import ScalarString
from ruamel.yaml.util import load_yaml_guess_indent

from hymt.documents.i18n_strings import Codec, StringTreeDocument
from hymt.documents.safety import check_size
from hymt.documents.units import DocumentFormat
from hymt.errors import InvalidDocumentError

NAME = "yaml"
MEDIA_TYPE = "application/yaml"
#: No re-wrapping of long translated strings.
_WIDTH = 4096
#: An indented key: its indentation is the mapping indent (ruamel.yaml guesses only sequences').
_NESTED_KEY = re.compile(r"^( +)[^\s#\-][^\n]*?:(?:\s|$)", re.MULTILINE)


class _Documents(list[object]):
    """The documents of a file that has more than one."""


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidDocumentError(f"{NAME}: the file is not UTF-8 text: {exc}", field="file") from exc


def _yaml(text: str | None = None) -> YAML:
    """A round-trip YAML keeping quotes; indented as `text` is when given."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = _WIDTH
    if text is None:
        return yaml
    try:
        _, sequence, offset = load_yaml_guess_indent(text)
    except YAMLError:
        return yaml
    nested_keys = [len(m.group(1)) for m in _NESTED_KEY.finditer(text)]
    mapping = min(nested_keys) if nested_keys else sequence
    if mapping is not None and sequence is not None:
        yaml.indent(mapping=mapping, sequence=sequence, offset=offset or 0)
    return yaml


class YamlCodec(Codec):
    name = NAME

    def load(self, data: bytes) -> object:
        check_size(data, NAME)
        text = _text(data)
        try:
            documents = list(_yaml().load_all(text))
        except (YAMLError, RecursionError, ValueError) as exc:
            raise InvalidDocumentError(f"{NAME}: the file is not valid YAML: {exc}", field="file") from exc
        return documents[0] if len(documents) == 1 else _Documents(documents)

    def dump(self, tree: object, data: bytes) -> bytes:
        text = _text(data)
        yaml = _yaml(text)
        out = io.StringIO()
        if isinstance(tree, _Documents):
            yaml.explicit_start = text.lstrip().startswith("---")
            yaml.dump_all(list(tree), out)
        else:
            yaml.dump(tree, out)
        return out.getvalue().encode("utf-8")

    def replace(self, old: str, new: str) -> str:
        if not isinstance(old, ScalarString):
            return new
        anchor = old.yaml_anchor()
        if anchor is not None:
            return type(old)(new, anchor=anchor.value)
        return type(old)(new)


def parse(data: bytes) -> StringTreeDocument:
    return StringTreeDocument(data, YamlCodec())


FORMAT = DocumentFormat(name=NAME, suffixes=(".yaml", ".yml"), media_type=MEDIA_TYPE, parse=parse, text=True)
