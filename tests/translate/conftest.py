"""Fixtures for the translation tests: a tiny checkpoint and translators over a scripted engine."""
from __future__ import annotations

import pytest

from hymt.testing import Answer, ScriptedEngine


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    from hymt.testing import write_tiny_checkpoint

    return write_tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "HY-MT1.5-1.8B", "HY-MT1.5-1.8B")


@pytest.fixture(scope="session")
def tiny_checkpoint(tiny_dir):
    from hymt.checkpoint import load_checkpoint

    return load_checkpoint(tiny_dir)


@pytest.fixture
def make_translator(tiny_dir, tiny_checkpoint, tmp_path):
    """make_translator(answer=None, cache=False) -> (Translator, ScriptedEngine); closed after."""
    from hymt.translate import Translator

    made = []

    def make(answer: Answer | None = None, cache=False, **kwargs):
        engine = ScriptedEngine(tiny_checkpoint, answer)
        if cache is True:
            cache = tmp_path / "cache.sqlite3"
        translator = Translator(str(tiny_dir), engine=engine, cache=cache, **kwargs)
        made.append(translator)
        return translator, engine

    yield make
    for translator in made:
        translator.close()
