"""What hymt's HTML format does with each element and attribute (docs/formats.md, HTML)."""
from __future__ import annotations

#: Phrasing elements: inside a block they are numbered tags of the sentence around them.
#: Every other element (p, div, li, td, h1-h6, button, option, custom elements...) starts
#: and ends units.
INLINE = frozenset(
    "a abbr acronym b bdi bdo big br cite data del dfn em font i img input ins label mark nobr "
    "picture q rb rp rt rtc ruby s small source span strike strong sub sup time tt u wbr".split()
)

#: Elements without content or end tag.
VOID = frozenset("area base br col embed hr img input keygen link meta param source track wbr".split())

#: Inline elements whose content is never translated: inside a sentence each is one void
#: tag carrying the whole element.
OPAQUE_INLINE = frozenset("code kbd samp var svg math".split())

#: Elements whose content is never translated (their own text attributes still are):
#: scripts, styles, preformatted text and code listings, form field contents (the value a
#: user edits), inert templates, and frames' fallback content.
OPAQUE_BLOCK = frozenset("script style pre textarea template iframe noembed noframes xmp plaintext".split())

#: Attributes whose value is text a reader sees or hears, on any element.
TEXT_ATTRIBUTES = frozenset(("alt", "title", "placeholder", "aria-label"))

#: `<input type=...>` whose `value` is a button's label.
BUTTON_INPUT_TYPES = frozenset(("button", "submit", "reset"))

#: `<meta name=... content=...>` (or `property=`) whose content is page text.
META_TEXT_NAMES = frozenset(("description", "og:title", "og:description", "twitter:title", "twitter:description"))

_BLOCK_STARTS = frozenset(
    "address article aside blockquote details dialog div dl fieldset figcaption figure footer form h1 h2 h3 h4 "
    "h5 h6 header hgroup hr main menu nav ol p pre section table ul".split()
)

#: {element: start tags that end it when it is still open} (the end tags HTML lets a
#: document leave out).
CLOSED_BY: dict[str, frozenset[str]] = {
    "p": _BLOCK_STARTS,
    "li": frozenset(("li",)),
    "dt": frozenset(("dt", "dd")),
    "dd": frozenset(("dt", "dd")),
    "tr": frozenset(("tr",)),
    "td": frozenset(("td", "th", "tr")),
    "th": frozenset(("td", "th", "tr")),
    "option": frozenset(("option", "optgroup")),
    "optgroup": frozenset(("optgroup",)),
}


def no_translate(attrs: tuple[tuple[str, str | None], ...]) -> bool:
    """`translate="no"` or a `notranslate` class: the element and all inside it stay."""
    for name, value in attrs:
        if name == "translate" and (value or "").strip().lower() == "no":
            return True
        if name == "class" and "notranslate" in (value or "").split():
            return True
    return False


def text_attribute_names(tag: str, attrs: tuple[tuple[str, str | None], ...]) -> frozenset[str]:
    """The attributes of this start tag whose values are units."""
    values = {name: (value or "").strip().lower() for name, value in attrs}
    names = set(TEXT_ATTRIBUTES)
    if tag == "input" and values.get("type") in BUTTON_INPUT_TYPES:
        names.add("value")
    if tag == "meta" and (values.get("name") in META_TEXT_NAMES or values.get("property") in META_TEXT_NAMES):
        names.add("content")
    return frozenset(names)
