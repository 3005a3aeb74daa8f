"""Numbered inline tags: how inline markup travels with its sentence through the model.

A unit's text marks inline markup with the tags of HY-MT1.5's formatted template:
`<sN>…</sN>` around content (bold, a link, a DOCX run) and `<sN/>` where an element has
no content (a line break or an image inside a sentence). Numbers are unique within a unit.
The model answers with the same tags, possibly reordered as the target language needs; the
answer is accepted only when every tag of the source is there exactly once, of the same kind
and well nested (`check_answer`). Otherwise the pipeline retries once and then falls back to
the plain translation with the markup kept around it (`fallback_tree`): markup is never
dropped.

A void tag written as an empty pair (`<s3></s3>`) is accepted for `<s3/>`: models trained on
paired tags sometimes write it so.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from hymt.documents.units import Node, TagNode, Tree

#: `<sN>`, `</sN>` or `<sN/>` (N from 1; spaces before the slash or bracket tolerated).
TAG_PATTERN = re.compile(r"<(/)?s([1-9][0-9]{0,3})\s*(/)?>")


class TagMismatch(ValueError):
    """An answer whose tags differ from the source's: the message says how."""


def open_tag(number: int) -> str:
    return f"<s{number}>"


def close_tag(number: int) -> str:
    return f"</s{number}>"


def void_tag(number: int) -> str:
    return f"<s{number}/>"


def has_tags(text: str) -> bool:
    return TAG_PATTERN.search(text) is not None


def parse_tree(text: str) -> Tree:
    """`text` as a tree; raises TagMismatch when its tags are not well nested or repeat."""
    stack: list[tuple[int, list[Node]]] = [(0, [])]
    seen: set[int] = set()
    pos = 0
    for match in TAG_PATTERN.finditer(text):
        _add_text(stack[-1][1], text[pos : match.start()])
        pos = match.end()
        closing, number, self_closing = match.group(1), int(match.group(2)), match.group(3)
        if closing:
            if len(stack) == 1 or stack[-1][0] != number:
                raise TagMismatch(f"</s{number}> closes a tag that is not open")
            _, children = stack.pop()
            stack[-1][1].append(TagNode(number, tuple(children)))
            continue
        if number in seen:
            raise TagMismatch(f"<s{number}> appears more than once")
        seen.add(number)
        if self_closing:
            stack[-1][1].append(TagNode(number, (), void=True))
        else:
            stack.append((number, []))
    if len(stack) > 1:
        raise TagMismatch(f"<s{stack[-1][0]}> is never closed")
    _add_text(stack[0][1], text[pos:])
    return tuple(stack[0][1])


def _add_text(nodes: list[Node], text: str) -> None:
    if not text:
        return
    if nodes and isinstance(nodes[-1], str):
        nodes[-1] += text
    else:
        nodes.append(text)


def tag_kinds(tree: Tree) -> dict[int, bool]:
    """{tag number: void} for every tag in `tree`."""
    kinds: dict[int, bool] = {}
    for node in tree:
        if isinstance(node, TagNode):
            kinds[node.number] = node.void
            kinds.update(tag_kinds(node.children))
    return kinds


def check_answer(answer: str, source: str) -> Tree:
    """The answer's tree when its tags match the source's; raises TagMismatch otherwise."""
    expected = tag_kinds(parse_tree(source))
    tree = _voids_as_written(parse_tree(answer), expected)
    found = tag_kinds(tree)
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    if missing or extra:
        parts = [f"missing {_names(missing)}"] if missing else []
        parts += [f"unexpected {_names(extra)}"] if extra else []
        raise TagMismatch("; ".join(parts))
    for number, void in expected.items():
        if found[number] != void:
            shape = f"empty (<s{number}/>)" if void else "a pair"
            raise TagMismatch(f"<s{number}> must be {shape}")
    return tree


def _voids_as_written(tree: Tree, expected: dict[int, bool]) -> Tree:
    """An empty pair standing for an expected void tag becomes a void tag."""
    out: list[Node] = []
    for node in tree:
        if isinstance(node, TagNode) and not node.void:
            if expected.get(node.number) and not node.children:
                node = TagNode(node.number, (), void=True)
            else:
                node = TagNode(node.number, _voids_as_written(node.children, expected))
        out.append(node)
    return tuple(out)


def _names(numbers: list[int]) -> str:
    return ", ".join(f"<s{n}>" for n in numbers)


def plain_text(text: str) -> str:
    """`text` without tags: what detection, the quality guard and the fallback request read.
    A void tag between two non-space characters becomes a space (a line break inside a
    sentence still separates its words)."""
    def replace(match: re.Match[str]) -> str:
        if not match.group(3):
            return ""
        before = text[match.start() - 1 : match.start()]
        after = text[match.end() : match.end() + 1]
        return " " if before and after and not before.isspace() and not after.isspace() else ""

    return TAG_PATTERN.sub(replace, text)


def tree_text(tree: Tree) -> str:
    """The text of a tree without tags."""
    return "".join(node if isinstance(node, str) else tree_text(node.children) for node in tree)


def tagged_text(tree: Tree) -> str:
    """A tree written back in tag syntax."""
    return render(tree, text=str, open=open_tag, close=close_tag, void=void_tag)


def render(
    tree: Tree,
    *,
    text: Callable[[str], str],
    open: Callable[[int], str],
    close: Callable[[int], str],
    void: Callable[[int], str],
) -> str:
    """A tree as a string: `text` escapes plain text for its destination, `open`/`close`/
    `void` give each tag's original markup."""
    parts: list[str] = []
    for node in tree:
        if isinstance(node, str):
            parts.append(text(node))
        elif node.void:
            parts.append(void(node.number))
        else:
            parts.append(open(node.number))
            parts.append(render(node.children, text=text, open=open, close=close, void=void))
            parts.append(close(node.number))
    return "".join(parts)


def fallback_tree(plain_answer: str, source: str) -> Tree:
    """The plain translation of a tagged sentence with the source's markup kept around it:
    the paired tags wrap the whole translation, outermost first in source order, and the void
    tags follow it. Formatting may then cover more words than it did, but nothing is lost."""
    tree = parse_tree(source)
    paired: list[int] = []
    voids: list[int] = []
    _collect(tree, paired, voids)
    inner: Tree = (plain_answer,) if plain_answer else ()
    for number in reversed(paired):
        inner = (TagNode(number, inner),)
    return inner + tuple(TagNode(n, (), void=True) for n in voids)


def _collect(tree: Tree, paired: list[int], voids: list[int]) -> None:
    for node in tree:
        if isinstance(node, TagNode):
            (voids if node.void else paired).append(node.number)
            _collect(node.children, paired, voids)


def join_trees(parts: Sequence[tuple[Tree, str]]) -> Tree:
    """Sentence trees and the separators after them, as one unit's tree."""
    nodes: list[Node] = []
    for tree, separator in parts:
        for node in tree:
            if isinstance(node, str):
                _add_text(nodes, node)
            else:
                nodes.append(node)
        _add_text(nodes, separator)
    return tuple(nodes)


def balanced_pieces(pieces: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Sentence pieces `(text, separator_after)` merged so that no paired tag is cut: a
    piece that leaves a tag open takes the next piece (and the separator between) until
    every tag it opened is closed. The pieces' texts and separators still concatenate to
    the input."""
    merged: list[tuple[str, str]] = []
    pending: tuple[str, str] | None = None
    for text, separator in pieces:
        if pending is not None:
            text = pending[0] + pending[1] + text
        if _open_depth(text) > 0:
            pending = (text, separator)
            continue
        pending = None
        merged.append((text, separator))
    if pending is not None:
        merged.append(pending)
    return merged


def _open_depth(text: str) -> int:
    depth = 0
    for match in TAG_PATTERN.finditer(text):
        if match.group(3):
            continue
        depth += -1 if match.group(1) else 1
    return depth
