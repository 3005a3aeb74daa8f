"""A tiny OpenAI-compatible completions server on 127.0.0.1 for backend tests.

It "generates" letters: token i of a request is 65 + (sum(prompt) + i) % 26, so a test can
predict every answer, and the text of a token id is chr(id).
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def fake_tokens(prompt_ids: list[int], n: int) -> list[int]:
    return [65 + (sum(prompt_ids) + i) % 26 for i in range(n)]


class FakeOpenAIServer:
    """mode: "token_ids" (vLLM return_token_ids), "logprobs" (token_id:N strings) or "text"."""

    BLOCK_MARKER = 999  # a prompt starting with it waits until `release` is set

    def __init__(self, mode: str = "token_ids"):
        self.mode = mode
        self.bodies: list[dict] = []
        self.release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def complete(self, body: dict) -> tuple[int, dict]:
        prompt = body["prompt"]
        ids = prompt if isinstance(prompt, list) else [ord(c) for c in prompt]
        if 666 in ids or (isinstance(prompt, str) and "boom" in prompt):
            return 400, {"error": {"message": "prompt rejected: boom", "type": "BadRequestError"}}
        if ids[0] == self.BLOCK_MARKER:
            self.release.wait(timeout=10)
        tokens = fake_tokens(ids, body["max_tokens"])
        stops = set() if body.get("ignore_eos") else set(body.get("stop_token_ids") or ())
        reason = "length"
        for i, t in enumerate(tokens):
            if t in stops:  # vLLM keeps the stop token in token_ids, not in text
                tokens, reason = tokens[: i + 1], "stop"
                break
        text = "".join(chr(t) for t in tokens if t not in stops)
        choice: dict = {"index": 0, "text": text, "finish_reason": reason}
        if self.mode == "token_ids":
            choice["token_ids"] = tokens
        elif self.mode == "logprobs":
            choice["logprobs"] = {"tokens": [f"token_id:{t}" for t in tokens]}
        return 200, {"id": "cmpl-1", "object": "text_completion", "choices": [choice]}

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, data: dict) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                if self.path == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path != "/v1/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                server.bodies.append({**body, "_auth": self.headers.get("Authorization")})
                self._send(*server.complete(body))

        return Handler
