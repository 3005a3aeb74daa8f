"""What `hymt translate` says on stderr about the quality guard's findings.

The guard (hymt/translate/quality.py) leaves issue codes on each segment it doubts; with
--json they are in the output, in text mode this report names the segments and explains
the codes.
"""
from __future__ import annotations

from collections.abc import Sequence

from hymt.translate.quality import DESCRIPTIONS, QualityIssue
from hymt.translate.result import Segment, TranslationResult

#: Segments listed one by one; the rest are counted.
MAX_LISTED = 10
_EXCERPT_CHARS = 40


def issue_report(result: TranslationResult) -> str:
    """Lines for stderr naming every segment left with issues; "" when there are none."""
    return segment_issue_report(result.segments, result.issues)


def segment_issue_report(segments: Sequence[Segment], issues: Sequence[str]) -> str:
    """`issue_report` for any translation's segments and issues (a text's, a file's)."""
    translatable = [s for s in segments if s.translatable]
    flagged = [(n, s) for n, s in enumerate(translatable, 1) if s.issues]
    if not flagged and not issues:
        return ""
    if not flagged:  # issues on the result without segments (a backend that reports no segments)
        return f"hymt: warning: the translation may be wrong: {_codes(tuple(issues))}"
    retried = " (after one retry)" if any(s.retried for _, s in flagged) else ""
    lines = [f"hymt: warning: {len(flagged)} of {len(translatable)} segments may be badly translated{retried}:"]
    for number, segment in flagged[:MAX_LISTED]:
        lines.append(f"  segment {number} {_excerpt(segment.source)}: {_codes(segment.issues)}")
    if len(flagged) > MAX_LISTED:
        lines.append(f"  ... and {len(flagged) - MAX_LISTED} more (--json lists every segment)")
    return "\n".join(lines)


def _codes(codes: tuple[str, ...]) -> str:
    return "; ".join(f"{code} ({DESCRIPTIONS[QualityIssue(code)]})" if code in set(QualityIssue) else code
                     for code in codes)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= _EXCERPT_CHARS else flat[: _EXCERPT_CHARS - 1] + "…")
