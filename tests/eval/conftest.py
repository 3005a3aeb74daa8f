"""Fixtures of the eval tests: tiny checkpoints, a small parallel corpus, and translators over
a scripted engine that answers from a fixed table (so scores and request counts are known)."""
from __future__ import annotations

import pytest

from hymt.engine.sampling import SamplingParams
from hymt.testing import ScriptedEngine, source_of

#: English source -> the scripted engine's Chinese answer.
ANSWERS = {
    "Hello world.": "你好，世界。",
    "The cat sleeps on the mat.": "猫睡在垫子上。",
    "I like green tea.": "我喜欢喝绿茶。",
    "Where is the station?": "火车站在哪里？",
    "It is raining today.": "今天在下雨。",
}
SOURCES = list(ANSWERS)
REFERENCES = ["你好，世界。", "猫在垫子上睡觉。", "我喜欢绿茶。", "车站在哪里？", "今天下雨了。"]
FUSION_HEAD = "Analyze the following"


def scripted_answer(user: str, params: SamplingParams) -> str:
    """The table's answer; sampled requests (a seed) add the seed, fusion requests a mark."""
    if user.startswith(FUSION_HEAD):
        return "融合：" + user.rsplit("```", 2)[-2]  # the last candidate, marked
    answer = ANSWERS[source_of(user)]
    return answer if params.seed is None else f"{answer}（候选{params.seed}）"


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    from hymt.testing import write_tiny_checkpoint

    return write_tiny_checkpoint(tmp_path_factory.mktemp("eval") / "HY-MT1.5-1.8B", "HY-MT1.5-1.8B")


@pytest.fixture(scope="session")
def chimera_dir(tmp_path_factory):
    from hymt.testing import write_tiny_checkpoint

    return write_tiny_checkpoint(tmp_path_factory.mktemp("eval") / "Hunyuan-MT-Chimera-7B", "Hunyuan-MT-Chimera-7B")


@pytest.fixture
def corpus_files(tmp_path):
    src, ref = tmp_path / "test.en", tmp_path / "test.zh"
    src.write_text("".join(s + "\n" for s in SOURCES), encoding="utf-8")
    ref.write_text("".join(r + "\n" for r in REFERENCES), encoding="utf-8")
    return src, ref


class ScriptedFactory:
    """A TranslatorFactory over ScriptedEngines; `engines` maps each opened scheme to its engine."""

    def __init__(self, model_dir, answers: dict | None = None) -> None:
        from hymt.checkpoint import load_checkpoint

        self.model_dir = model_dir
        self.checkpoint = load_checkpoint(model_dir)
        self.answers = answers or {}
        self.engines: dict[str, ScriptedEngine] = {}

    def __call__(self, scheme: str):
        from hymt.eval import OpenedModel
        from hymt.translate.translator import Translator

        engine = ScriptedEngine(self.checkpoint, self.answers.get(scheme, scripted_answer))
        self.engines[scheme] = engine
        return OpenedModel(Translator(str(self.model_dir), engine=engine, cache=False))


@pytest.fixture
def scripted_factory():
    return ScriptedFactory
