"""The native API's options reach the model: each asserted on the prompts a recording
stand-in engine receives (in process, a Translator over hymt.testing.ScriptedEngine)."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from hymt.server.app import create_app
from hymt.server.settings import ServerSettings


def _client(directory, family, answer=None):
    from hymt.checkpoint import load_checkpoint
    from hymt.testing import ScriptedEngine
    from hymt.translate import Translator

    engines = []

    def factory(settings):
        engines.append(ScriptedEngine(load_checkpoint(directory), answer))
        return Translator(str(directory), engine=engines[-1], cache=False)

    client = TestClient(create_app(ServerSettings(model=str(directory)), translator_factory=factory))
    return client, engines


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    from hymt.testing import write_tiny_checkpoint

    root = tmp_path_factory.mktemp("families")
    return {name: write_tiny_checkpoint(root / name, name) for name in ("HY-MT1.5-1.8B", "Hy-MT2-1.8B",
                                                                        "Hunyuan-MT-Chimera-7B")}


def _prompts(model_dirs, family, payload, answer=None):
    client, engines = _client(model_dirs[family], family, answer)
    with client:
        assert client.app.state.hymt.service.wait_ready(30)
        r = client.post("/api/translate", json={"src": "en", "tgt": "de", "retry": False, **payload})
        assert r.status_code == 200, r.text
        return r.json(), [user for user, _ in engines[-1].prompts[1:]]  # after the warm-up


def test_glossary_and_context_reach_the_prompt(model_dirs):
    _, prompts = _prompts(model_dirs, "HY-MT1.5-1.8B", {"text": "The cat sleeps. A dog barks.",
                                                         "glossary": {"cat": "Mieze"}, "context": "A farm story."})
    assert any("cat 翻译成 Mieze" in p and "The cat sleeps." in p for p in prompts)  # terminology
    assert any(p.startswith("A farm story.\n") and "A dog barks." in p for p in prompts)  # context


def test_style_and_personalization_reach_hy_mt2(model_dirs):
    _, prompts = _prompts(model_dirs, "Hy-MT2-1.8B", {"text": "Thanks a lot.", "style": "formal letter"})
    assert any("【formal letter】" in p or "[formal letter]" in p for p in prompts)
    _, prompts = _prompts(model_dirs, "Hy-MT2-1.8B", {"text": "Thanks a lot.", "template": "personalization",
                                                       "preferences": ["Use British spelling."]})
    assert any("1. Use British spelling." in p and "Thanks a lot." in p for p in prompts)


def test_structured_data_is_one_prompt_with_its_format_type(model_dirs):
    data = '{"title": "Hello", "body": "See you soon."}'
    _, prompts = _prompts(model_dirs, "Hy-MT2-1.8B", {"text": data, "template": "structured",
                                                       "format_type": "JSON"})
    assert len(prompts) == 1 and "JSON" in prompts[0] and data in prompts[0]


def test_format_keeps_markup_out_of_the_prompt(model_dirs):
    _, prompts = _prompts(model_dirs, "HY-MT1.5-1.8B", {"text": "# Title\n\nSome **bold** words.",
                                                         "format": "markdown"})
    assert any(p.endswith("\n\nTitle") for p in prompts)
    assert any("Some <s1>bold</s1> words." in p for p in prompts) and not any("#" in p for p in prompts)


def test_fusion_through_the_native_api(model_dirs):
    def answer(user, params):
        return "Fused." if "translations of the" in user else f"Candidate {params.seed}."

    body, prompts = _prompts(model_dirs, "Hunyuan-MT-Chimera-7B", {"text": "Good morning.", "fusion": 2}, answer)
    assert body["translation"] == "Fused."
    assert sum("translations of the" in p for p in prompts) == 1 and len(prompts) == 3
