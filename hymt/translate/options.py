"""TranslateOptions: how to translate (everything but the text and the languages), validated once.

Every entry point takes the same shape: `Translator.translate(text, to, options=...)` and its
siblings, the server's jobs, the CLI. Keyword arguments (`glossary=`, `context=`, ...) are
sugar for the same fields, converted in one place (`options_with`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from hymt.documents.units import TagRules
from hymt.errors import InvalidInputError
from hymt.families import canonical_template
from hymt.families.prompt_spec import glossary_pairs, string_tuple
from hymt.translate.glossary import Glossary
from hymt.translate.sampling_policy import Sampling
from hymt.translate.text_formats import check_text_format

#: The most candidates a fusion call may ask for (the official template shows six).
MAX_FUSION = 6


@dataclass(frozen=True)
class TranslateOptions:
    """How one translate call works.

    Attributes:
        glossary: (source term, target term) pairs; segments that contain a term use the
            terminology template with the terms they contain (a mapping is accepted too).
        context: text the input follows (context template).
        style: the target style (Hy-MT2's style template).
        template: force one official template ("formatted", "delimiters", "structured",
            "personalization", "fusion", ...); None chooses per segment.
        format: the text's format ("text", "markdown", "html", "srt", ...): what is markup,
            kept, and what is text, translated.
        format_type: the data format the structured template names ("JSON", "YAML", ...).
        preferences: the personalization template's preference lines.
        candidates: candidate translations the fusion template refines (Chimera).
        fusion: N > 0 runs Chimera's pipeline: N sampled candidate translations of each text
            by the model itself, then one fusion request over them (translate/fusion.py).
        sampling: the decoding (`Sampling`; also "greedy", "official", a SamplingParams or a
            mapping of Sampling fields).
        use_cache: read and write the translation cache.
        retry: send a segment the quality guard flags to the engine once more. False makes
            every segment exactly one engine request (benchmarks); issues are still reported.
        tag_rules: how a markup format treats elements by name (ignored, splitting,
            non-splitting; DeepL's tag-handling options); formats without markup ignore it.
        split_sentences: split a unit (a paragraph, a line of its own) into sentences, one
            request each. False sends each unit whole; a unit over the segment budget is still
            cut to fit (at clauses, then spaces).
    """

    glossary: Glossary = ()
    context: str | None = None
    style: str | None = None
    template: str | None = None
    format: str = "text"
    format_type: str | None = None
    preferences: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()
    fusion: int = 0
    sampling: Sampling = field(default_factory=Sampling)
    use_cache: bool = True
    retry: bool = True
    tag_rules: TagRules = field(default_factory=TagRules)
    split_sentences: bool = True

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "glossary", glossary_pairs(self.glossary))
        for name in ("context", "style", "format_type"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise InvalidInputError(f"{name} must be a non-empty string or None", field=name)
        if self.template is not None:
            set_(self, "template", canonical_template(self.template))
        set_(self, "format", check_text_format(self.format))
        set_(self, "preferences", string_tuple(self.preferences, "preferences"))
        set_(self, "candidates", string_tuple(self.candidates, "candidates"))
        set_(self, "sampling", Sampling.parse(self.sampling))
        if not isinstance(self.fusion, int) or isinstance(self.fusion, bool) or not 0 <= self.fusion <= MAX_FUSION:
            raise InvalidInputError(f"fusion must be a number of candidates from 0 to {MAX_FUSION}, got "
                                    f"{self.fusion!r}", field="fusion")
        for name in ("use_cache", "retry", "split_sentences"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidInputError(f"{name} must be True or False, got {getattr(self, name)!r}", field=name)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready data (reports, resume keys)."""
        data = dataclasses.asdict(self)
        rules = self.tag_rules
        data["tag_rules"] = {"ignore": sorted(rules.ignore), "splitting": sorted(rules.splitting),
                             "non_splitting": sorted(rules.non_splitting),
                             "outline_detection": rules.outline_detection}
        return data

    def replace(self, **changes: object) -> TranslateOptions:
        """A copy with `changes` applied (validated again)."""
        return options_with(self, changes)


OPTION_NAMES = tuple(f.name for f in dataclasses.fields(TranslateOptions))


def options_with(options: TranslateOptions | None, changes: Mapping[str, object]) -> TranslateOptions:
    """`options` (default: TranslateOptions()) with keyword arguments applied: the one place
    keyword sugar becomes options."""
    base = options if options is not None else TranslateOptions()
    if not isinstance(base, TranslateOptions):
        raise InvalidInputError(f"options must be a TranslateOptions, got {type(base).__name__}", field="options")
    unknown = sorted(set(changes) - set(OPTION_NAMES))
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {', '.join(unknown)}; valid: {', '.join(OPTION_NAMES)}")
    return dataclasses.replace(base, **changes) if changes else base  # type: ignore[arg-type]
