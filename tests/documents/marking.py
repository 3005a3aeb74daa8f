"""The marking stand-in translation of the format tests (a module of its own: test files import
it by this unique name; `conftest` is a different module in every test folder)."""
from __future__ import annotations

from hymt.documents.units import Node, TagNode, Tree

OPEN, CLOSE = "«", "»"


def mark_tree(tree: Tree) -> Tree:
    """Every text node with a non-space character wrapped in «»; tags kept."""
    out: list[Node] = []
    for node in tree:
        if isinstance(node, str):
            out.append(f"{OPEN}{node}{CLOSE}" if node.strip() else node)
        else:
            out.append(TagNode(node.number, mark_tree(node.children), node.void))
    return tuple(out)


def unmark(text: str) -> str:
    return text.replace(OPEN, "").replace(CLOSE, "")
