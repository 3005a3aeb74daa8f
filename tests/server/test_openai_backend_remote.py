"""The `openai` engine backend against a real OpenAI-compatible server process: the session's
`hymt serve` over a tiny checkpoint, whose /v1/completions takes token ids (one hymt serving as
another's engine, as vLLM or SGLang would). Greedy tokens equal the local engine's; the
Translator translates, batches and streams through it; cancellation and server errors end
only their own request. A scripted server that answers with a <think> block shows the
Translator's cleanup applies to remote answers too."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hymt.checkpoint import load_checkpoint
from hymt.engine.async_engine import AsyncEngine
from hymt.engine.backends.openai_engine import OpenAIEngine
from hymt.engine.factory import create_engine
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError
from tests.server.conftest import LIMIT_KEYS, MAX_TOKENS, free_port


@pytest.fixture(scope="module")
def checkpoint(tiny_model_dir):
    return load_checkpoint(tiny_model_dir)


@pytest.fixture(scope="module")
def remote(hymt_server, checkpoint):
    engine = OpenAIEngine(hymt_server.url, tokenizer=checkpoint, max_concurrency=4)
    yield AsyncEngine(engine)


def _prompts(checkpoint) -> list[list[int]]:
    return [checkpoint.encode(text) for text in ("Hello there.", "A somewhat longer prompt, with commas.", "x")]


def test_greedy_tokens_equal_the_local_engine(remote, checkpoint, tiny_model_dir):
    params = SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True)
    handles = [remote.submit(ids, params) for ids in _prompts(checkpoint)]
    remote_tokens = [list(h.result(60).token_ids) for h in handles]
    local = create_engine("native", str(tiny_model_dir), device="cpu")
    try:
        local_tokens = [list(out.token_ids) for out in local.generate(_prompts(checkpoint), params)]
    finally:
        local.close()
    assert remote_tokens == local_tokens
    assert all(len(tokens) == MAX_TOKENS for tokens in remote_tokens)


def test_the_translator_translates_batches_and_streams_through_the_remote(hymt_server, tiny_model_dir):
    from hymt.translate import Translator

    with Translator(str(tiny_model_dir), engine="openai", cache=False,
                    engine_options={"base_url": hymt_server.url}) as translator:
        assert translator.info.engine == "openai"
        one = translator.translate("Good morning.", to="de", source="en")
        batch = translator.translate_batch(["Good morning.", "See you."], to="fr", source="en")
        stream = translator.stream("Good morning.", to="de", source="en")
        pieces = list(stream)
    assert one.completion_tokens > 0 and one.target.code == "de"
    assert [r.target.code for r in batch] == ["fr", "fr"] and all(r.completion_tokens for r in batch)
    assert "".join(pieces) == stream.result.text == one.text  # greedy: the same answer again


def test_a_cancelled_request_ends_alone_and_the_engine_keeps_serving(remote, checkpoint, hymt_server):
    params = SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True)
    cancelled = remote.submit(checkpoint.encode("Cancel me, please."), params)
    cancelled.cancel()
    assert cancelled.result(60).finish_reason == "abort"
    after = remote.submit(checkpoint.encode("And then this one."), params).result(60)
    assert after.finish_reason == "length" and len(after.token_ids) == MAX_TOKENS
    status = hymt_server.wait_idle()  # the request on the wire finished there; nothing is left
    assert (status["running"], status["waiting"], status["queue_depth"]) == (0, 0, 0)


def test_server_errors_fail_only_their_request(remote, checkpoint, limits_server, hymt_server):
    params = SamplingParams(max_tokens=4)
    too_long = remote.submit([5] * 5000, params)  # past the server's model length
    fine = remote.submit(checkpoint.encode("Still fine."), params)
    with pytest.raises(EngineError, match=rf"{hymt_server.url}/v1/completions answered 4\d\d"):
        too_long.result(60)
    assert fine.result(60).finish_reason in ("stop", "length")
    with pytest.raises(EngineError, match="answered 401"):
        OpenAIEngine(limits_server.url, tokenizer=checkpoint)  # no key: even /v1/models is refused
    keyed = OpenAIEngine(limits_server.url, tokenizer=checkpoint, api_key=LIMIT_KEYS[1])
    try:
        assert keyed.model == "HY-MT1.5-1.8B"
    finally:
        keyed.close()
    with pytest.raises(EngineError, match="cannot reach"):
        OpenAIEngine(f"http://127.0.0.1:{free_port()}", tokenizer=checkpoint)


class _ThinkingServer:
    """An OpenAI-compatible completions server that answers every prompt with a <think> block
    and then the translation, as text only (no token ids), like a reasoning model would."""

    ANSWER = "<think>\nThe user wants German. 'Good morning' is 'Guten Morgen'.\n</think>\n\nGuten Morgen."

    def __init__(self):
        answer = self.ANSWER

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, data):
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                self._send({"object": "list", "data": [{"id": "thinker", "object": "model"}]})

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                self._send({"id": "cmpl-1", "object": "text_completion",
                            "choices": [{"index": 0, "text": answer, "finish_reason": "stop"}]})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_think_blocks_of_a_remote_answer_are_stripped(tiny_model_dir):
    from hymt.translate import Translator

    with _ThinkingServer() as url, Translator(str(tiny_model_dir), engine="openai", cache=False,
                                              engine_options={"base_url": url}) as translator:
        result = translator.translate("Good morning.", to="de", source="en")
    assert result.text == "Guten Morgen."
