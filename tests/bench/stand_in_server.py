"""A stand-in for `hymt serve`'s native API on 127.0.0.1: POST /api/translate only.

Every `reject_every`-th request gets 429 (a full queue), so error counting is exercised; the
rest answer 200 with the usage block the real server sends. With `metrics`, GET /metrics gets
its n-th (status, text) on the n-th scrape (the last one repeats); `events` records the order
of scrapes and translations.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StandInServer:
    def __init__(self, *, api_key: str | None = None, reject_every: int = 0,
                 metrics: list[tuple[int, str]] | None = None):
        self.api_key = api_key
        self.reject_every = reject_every
        self.metrics = metrics
        self.bodies: list[dict] = []
        self.events: list[str] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> StandInServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def answer(self, body: dict, auth: str | None) -> tuple[int, dict]:
        if self.api_key and auth != f"Bearer {self.api_key}":
            return 401, {"error": {"message": "an API key is required", "type": "auth"}}
        with self._lock:
            self.bodies.append(body)
            self.events.append("translate")
            count = len(self.bodies)
        if self.reject_every and count % self.reject_every == 0:
            return 429, {"error": {"message": "queue full", "type": "overloaded"}}
        tokens = body["sampling"]["max_tokens"]
        usage = {"prompt_tokens": 20, "completion_tokens": tokens}
        return 200, {"translation": "译文", "src": body["src"], "tgt": body["tgt"], "usage": usage,
                     "results": [{"translation": "译文", "usage": usage, "segments": 1}]}

    def scrape(self) -> tuple[int, str]:
        with self._lock:
            scrapes = self.events.count("metrics")
            self.events.append("metrics")
        if self.metrics is None:
            return 404, "not found"
        return self.metrics[min(scrapes, len(self.metrics) - 1)]

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                status, text = server.scrape() if self.path == "/metrics" else (404, "not found")
                raw = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path != "/api/translate":
                    status, data = 404, {"error": {"message": "not found"}}
                else:
                    status, data = server.answer(body, self.headers.get("Authorization"))
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                if status == 429:
                    self.send_header("Retry-After", "1")
                self.end_headers()
                self.wfile.write(raw)

        return Handler
