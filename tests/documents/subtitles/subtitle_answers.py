"""Shared test material for tests/documents/subtitles: answers a careless model might give,
and random subtitle files built from realistic and malformed lines.

(A module with a unique name: pytest puts this directory on sys.path.)
"""
from __future__ import annotations

import random

from hymt.documents.units import Node, TagNode, Tree

#: Line breaks and blank lines a model may put into a cue's translation.
BREAKS = ("\n", "\n\n", "\r\n", "\r\n \r\n", "\n\t\n\n", "\r")


def careless(tree: Tree, rng: random.Random) -> Tree:
    """`tree` with blank lines and line breaks inside, before and after its texts, and its
    void tags side by side with line breaks around them: every tag still there once."""
    voids = [node for node in tree if isinstance(node, TagNode) and node.void]
    out: list[Node] = [rng.choice(BREAKS)]
    for node in tree:
        if isinstance(node, str):
            cut = rng.randrange(len(node) + 1)
            out.append(node[:cut] + rng.choice(BREAKS) + node[cut:])
        elif not node.void:
            out.append(TagNode(node.number, careless(node.children, rng)))
    out += [rng.choice(BREAKS), *voids, rng.choice(BREAKS)]
    return _merge_text(out)


#: Pieces of text a model should never write into a cue, and might.
HOSTILE = ("\n", "\r\n", "\n\n", "<", ">", "&", "{", "}", "\\", "-->", "1", "00:00:01,000 --> 00:00:02,000",
           "a", " ", "\t", "<s1>", "&amp;", "{\\i1}", "\\N", "NOTE", "WEBVTT", "[Events]", "Dialogue: 0,")


def scrambled(tree: Tree, rng: random.Random) -> Tree:
    """`tree` with every text replaced by hostile pieces and its nodes shuffled (tags keep
    their kind and nesting, each still there once)."""
    out: list[Node] = []
    for node in tree:
        if isinstance(node, str):
            out.append("".join(rng.choice(HOSTILE) for _ in range(rng.randrange(0, 8))))
        elif node.void:
            out.append(node)
        else:
            out.append(TagNode(node.number, scrambled(node.children, rng)))
    rng.shuffle(out)
    return _merge_text([node for node in out if node != ""])


def _merge_text(nodes: list[Node]) -> Tree:
    merged: list[Node] = []
    for node in nodes:
        if isinstance(node, str) and merged and isinstance(merged[-1], str):
            merged[-1] += node
        else:
            merged.append(node)
    return tuple(merged)


def random_file(rng: random.Random, head: list[str], pool: list[str], lines: int) -> str:
    """`head` then `lines` lines drawn from `pool`, each with a random line ending (CRLF, LF
    or CR), sometimes a byte order mark, sometimes no final line ending."""
    chosen = head + [rng.choice(pool) for _ in range(lines)]
    text = "".join(line + rng.choice(("\n", "\n", "\r\n", "\r")) for line in chosen)
    if rng.random() < 0.2:
        text = "\ufeff" + text
    if rng.random() < 0.3:
        text = text.rstrip("\r\n")
    return text
