"""The help layout of hymt's commands: the description as written, and each option's default."""
from __future__ import annotations

import argparse


class DefaultsHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Appends "(default: X)" to an option's help when it has a default worth showing: not
    None, False or empty (flags and optional values), and not already explained in the text."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if default is argparse.SUPPRESS or default in (None, False, [], ()) or "default" in text.lower():
            return text
        if isinstance(default, (list, tuple)):
            return text + " (default: " + " ".join(str(item) for item in default) + ")"
        return text + " (default: %(default)s)"
