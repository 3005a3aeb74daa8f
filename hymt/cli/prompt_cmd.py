"""`hymt prompt`: print the exact model input hymt would send for one translation.

Without --model the family's built-in chat format is used; with --model the checkpoint is
loaded and its own chat template renders the turn (and --ids can tokenize it).
"""
from __future__ import annotations

import argparse
import json

#: Template implied by an option when --template is not given.
_IMPLIED_TEMPLATES = (
    ("glossary", "terminology"),
    ("context", "context"),
    ("style", "style"),
    ("candidate", "fusion"),
    ("preference", "personalization"),
    ("format_type", "structured"),
)
DEFAULT_FAMILY = "HY-MT1.5-1.8B"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prompt",
        help="print the exact model input for a translation",
        description="Print the exact model input (prompt template + chat format) for one translation.",
    )
    parser.add_argument("text", help="the text to translate")
    parser.add_argument("--to", dest="target", required=True, help="target language (code or name)")
    parser.add_argument("--from", dest="source", help="source language (code or name); default unknown")
    parser.add_argument("--model", help="checkpoint directory or hub id: render with its chat template")
    parser.add_argument("--family", help=f"model family (overrides detection; default {DEFAULT_FAMILY})")
    parser.add_argument("--template", help="prompt template (default: implied by the options, else default)")
    parser.add_argument("--glossary", action="append", default=[], metavar="SRC=TGT",
                        help="glossary entry for the terminology template (repeatable)")
    parser.add_argument("--context", help="preceding text / background for the context template")
    parser.add_argument("--style", help="target style for the style template")
    parser.add_argument("--candidate", action="append", default=[], help="candidate translation (fusion)")
    parser.add_argument("--preference", action="append", default=[], help="user preference (personalization)")
    parser.add_argument("--format-type", dest="format_type", help="data format for the structured template")
    parser.add_argument("--ids", action="store_true", help="also print the token ids (needs --model)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hymt.errors import InvalidInputError
    from hymt.families import PromptSpec, build_prompt, detect_family, get_family

    if args.ids and not args.model:
        raise InvalidInputError("--ids needs --model (the checkpoint's tokenizer)", field="ids")
    checkpoint = None
    if args.model:
        from hymt.checkpoint import load_checkpoint

        checkpoint = load_checkpoint(args.model)
        family = detect_family(checkpoint, family=args.family)
    else:
        family = get_family(args.family or DEFAULT_FAMILY)
    spec = PromptSpec(
        text=args.text,
        target=args.target,
        source=args.source,
        template=args.template or _implied_template(args),
        glossary=tuple(_glossary_entry(entry) for entry in args.glossary),
        context=args.context,
        style=args.style,
        candidates=tuple(args.candidate),
        format_type=args.format_type,
        preferences=tuple(args.preference),
    )
    model_input = family.render_chat(build_prompt(family, spec), checkpoint)
    print(model_input)
    if checkpoint is not None and args.ids:  # --ids without --model was refused above
        print(json.dumps(checkpoint.encode(model_input)))
    return 0


def _implied_template(args: argparse.Namespace) -> str:
    from hymt.errors import InvalidInputError

    implied = [template for option, template in _IMPLIED_TEMPLATES if getattr(args, option)]
    if len(implied) > 1:
        raise InvalidInputError(
            f"options for several templates ({', '.join(implied)}); choose one with --template", field="template"
        )
    return implied[0] if implied else "default"


def _glossary_entry(entry: str) -> tuple[str, str]:
    from hymt.errors import InvalidInputError

    source, sep, target = entry.partition("=")
    if not sep or not source.strip() or not target.strip():
        raise InvalidInputError(f"--glossary takes SRC=TGT, got {entry!r}", field="glossary")
    return source, target
