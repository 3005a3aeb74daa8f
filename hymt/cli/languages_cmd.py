"""`hymt languages`: the 38 supported languages, their names and the codes clients may send."""
from __future__ import annotations

import argparse
import json
import unicodedata


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "languages", help="list the supported languages", description="List the 38 supported languages."
    )
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hymt.languages import LANGUAGES

    if args.json:
        entries = [
            {"code": lang.code, "english_name": lang.english_name, "chinese_name": lang.chinese_name,
             "aliases": list(lang.aliases), "scripts": list(lang.scripts)}
            for lang in LANGUAGES
        ]
        print(json.dumps(entries, ensure_ascii=False, indent=2))
        return 0
    header = ("code", "English", "Chinese", "aliases")
    rows = [(lang.code, lang.english_name, lang.chinese_name, ", ".join(lang.aliases)) for lang in LANGUAGES]
    widths = [max(_width(row[i]) for row in (header, *rows)) for i in range(3)]
    for row in (header, *rows):
        cells = [cell + " " * (width - _width(cell)) for cell, width in zip(row, widths)]
        print("  ".join([*cells, row[3]]).rstrip())
    return 0


def _width(text: str) -> int:
    """Terminal columns: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
