"""OpenAIEngine: an OpenAI-compatible completions server (vLLM, SGLang, llama.cpp) as the engine.

Each request is one `POST {base_url}/v1/completions`. Requests run concurrently in a small
thread pool; `step()` waits briefly and returns whatever finished, so the engine fits the
same step loop as the local backends.
"""
from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Literal, Protocol

import httpx

from hymt.engine.interface import Engine, EngineStats
from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError, InvalidInputError

PromptFormat = Literal["tokens", "text"]
PROMPT_FORMATS = ("tokens", "text")
_TOKEN_ID_PREFIX = "token_id:"  # vLLM's logprobs token strings under return_tokens_as_token_ids


class Tokenizer(Protocol):
    """What the engine needs from a tokenizer (a hymt Checkpoint has both)."""

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str: ...


class OpenAIEngine(Engine):
    """Sends token-id prompts to a remote OpenAI-compatible server and reads token ids back.

    Args:
        base_url: server root, e.g. "http://127.0.0.1:8001" (a trailing "/v1" is accepted).
        model: the served model name; default the first id of `GET /v1/models`.
        tokenizer: a Checkpoint (or any object with encode/decode). Needed for
            `prompt_format="text"` and for servers that return only text.
        stop_token_ids: default stop ids; default the tokenizer's `eos_token_ids` if it has them.
        prompt_format: "tokens" sends the token-id list (vLLM, SGLang); "text" sends the
            detokenized prompt (llama.cpp, others).
        api_key: sent as `Authorization: Bearer ...`.
        max_concurrency: requests in flight at once.
        timeout_s: per-request HTTP timeout.
        vllm_extras: send top_k, repetition_penalty, stop_token_ids, ignore_eos and
            return_token_ids (vLLM/SGLang extensions); turn off for strict OpenAI servers.
        poll_s: longest a `step()` waits for a request to finish.
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None = None,
        tokenizer: Tokenizer | None = None,
        stop_token_ids: Sequence[int] | None = None,
        prompt_format: PromptFormat = "tokens",
        api_key: str | None = None,
        max_concurrency: int = 8,
        timeout_s: float = 600.0,
        vllm_extras: bool = True,
        poll_s: float = 0.05,
    ):
        if prompt_format not in PROMPT_FORMATS:
            raise InvalidInputError(f"prompt_format must be one of {PROMPT_FORMATS}, got {prompt_format!r}",
                                    field="prompt_format")
        if prompt_format == "text" and tokenizer is None:
            raise InvalidInputError("prompt_format='text' needs a tokenizer to detokenize prompts", field="tokenizer")
        if not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise InvalidInputError(f"max_concurrency must be a positive integer, got {max_concurrency!r}",
                                    field="max_concurrency")
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self.tokenizer = tokenizer
        default_stops = getattr(tokenizer, "eos_token_ids", ()) or ()
        self.stop_token_ids = tuple(int(t) for t in (stop_token_ids if stop_token_ids is not None else default_stops))
        self.prompt_format: PromptFormat = prompt_format
        self.vllm_extras = vllm_extras
        self.poll_s = poll_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout_s,
            limits=httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency),
        )
        self._pool = ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="hymt-openai")
        self._lock = threading.Lock()  # guards _inflight, _ready and the counters
        self._inflight: dict[str, Future] = {}
        self._ready: list[RequestOutput] = []
        self._ids = itertools.count()
        self._prompt_tokens = 0
        self._generated_tokens = 0
        self.model = model if model is not None else self._first_model()

    # -- Engine interface -------------------------------------------------------------------

    def add_request(
        self, prompt_token_ids: Sequence[int], params: SamplingParams, request_id: str | None = None, *,
        final_only: bool = False,
    ) -> str:
        # Every output of this engine is a final one (one completions call): final_only changes nothing.
        prompt = [int(t) for t in prompt_token_ids]
        if not prompt:
            raise InvalidInputError("prompt_token_ids must not be empty", field="prompt_token_ids")
        rid = request_id if request_id is not None else f"oai-{next(self._ids)}"
        with self._lock:
            if rid in self._inflight:
                raise InvalidInputError(f"request_id {rid!r} is already running", field="request_id")
            self._inflight[rid] = self._pool.submit(self._complete, rid, prompt, params, time.perf_counter())
        return rid

    def step(self) -> list[RequestOutput]:
        """Outputs of requests that finished since the last step (waits up to `poll_s`).

        A request the server refused or that could not reach it finishes with `error` set (an
        EngineError with the server's message), as the local engines report a rejected
        request: it fails alone, the others go on.
        """
        with self._lock:
            futures = list(self._inflight.values())
        if futures and not self._ready:
            wait(futures, timeout=self.poll_s, return_when=FIRST_COMPLETED)
        with self._lock:
            for rid, fut in list(self._inflight.items()):
                if not fut.done():
                    continue
                del self._inflight[rid]
                exc = fut.exception()
                if exc is None:
                    self._ready.append(fut.result())
                else:
                    error = exc if isinstance(exc, EngineError) else EngineError(f"request {rid} failed: {exc}")
                    self._ready.append(RequestOutput(rid, [], finished=True, finish_reason="abort", error=error))
            ready, self._ready = self._ready, []
        return ready

    def abort(self, request_id: str) -> None:
        # A request already on the wire cannot be recalled; its answer is dropped.
        with self._lock:
            fut = self._inflight.pop(request_id, None)
            self._ready = [o for o in self._ready if o.request_id != request_id]
        if fut is not None:
            fut.cancel()

    def has_unfinished(self) -> bool:
        with self._lock:
            return bool(self._inflight) or bool(self._ready)

    def stats(self) -> EngineStats:
        with self._lock:
            return EngineStats(num_running=len(self._inflight), generated_tokens_total=self._generated_tokens,
                               prompt_tokens_total=self._prompt_tokens)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()

    # -- one request --------------------------------------------------------------------------

    def request_body(self, prompt: list[int], params: SamplingParams) -> dict[str, Any]:
        """The JSON body of the completions call for `prompt` under `params`."""
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt if self.prompt_format == "tokens" else self.tokenizer.decode(prompt, False),
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "stream": False,
        }
        if params.seed is not None:
            body["seed"] = params.seed
        if self.vllm_extras:
            body.update(
                top_k=params.top_k if params.top_k > 0 else -1,
                repetition_penalty=params.repetition_penalty,
                stop_token_ids=list(params.effective_stop_ids(self.stop_token_ids)),
                ignore_eos=params.ignore_eos,
                return_token_ids=True,
                skip_special_tokens=True,
            )
        return body

    def _complete(self, rid: str, prompt: list[int], params: SamplingParams, arrival: float) -> RequestOutput:
        body = self.request_body(prompt, params)
        data = self._post("/v1/completions", body)
        try:
            choice = data["choices"][0]
        except (KeyError, IndexError, TypeError) as exc:
            raise EngineError(f"{self.base_url}/v1/completions returned no choices: {str(data)[:300]}") from exc
        finish = time.perf_counter()
        tokens = self._token_ids(choice)[: params.max_tokens]
        reason = "length" if choice.get("finish_reason") == "length" else "stop"
        # vLLM keeps the stop token in token_ids, and a server without the extras may run past
        # one; hymt's outputs end before the first stop id.
        stops = set(params.effective_stop_ids(self.stop_token_ids))
        cut = next((i for i, t in enumerate(tokens) if t in stops), None)
        if cut is not None:
            tokens, reason = tokens[:cut], "stop"
        with self._lock:
            self._prompt_tokens += len(prompt)
            self._generated_tokens += len(tokens)
        return RequestOutput(
            request_id=rid, prompt_token_ids=prompt, token_ids=tokens, new_token_ids=list(tokens), finished=True,
            finish_reason=reason, text=choice.get("text"), arrival_time=arrival, finish_time=finish,
        )

    def _token_ids(self, choice: dict) -> list[int]:
        """Generated ids: the server's own when it sends them, else the text re-tokenized."""
        if isinstance(choice.get("token_ids"), list):
            return [int(t) for t in choice["token_ids"]]
        tokens = (choice.get("logprobs") or {}).get("tokens")
        if tokens and all(isinstance(t, str) and t.startswith(_TOKEN_ID_PREFIX) for t in tokens):
            return [int(t[len(_TOKEN_ID_PREFIX):]) for t in tokens]
        if self.tokenizer is None:
            raise EngineError(
                f"{self.base_url} returned text without token ids; pass tokenizer= so hymt can re-tokenize it"
            )
        return list(self.tokenizer.encode(choice.get("text") or ""))

    def _post(self, path: str, body: dict) -> dict:
        return self._call("POST", path, json=body)

    def _call(self, method: str, path: str, **kwargs) -> dict:
        try:
            resp = self._client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise EngineError(f"cannot reach {self.base_url}{path}: {exc}") from exc
        if resp.status_code >= 400:
            raise EngineError(f"{self.base_url}{path} answered {resp.status_code}: {_server_message(resp)}")
        try:
            return resp.json()
        except ValueError as exc:
            raise EngineError(f"{self.base_url}{path} returned non-JSON: {resp.text[:300]}") from exc

    def _first_model(self) -> str:
        data = self._call("GET", "/v1/models")
        try:
            return str(data["data"][0]["id"])
        except (KeyError, IndexError, TypeError) as exc:
            raise EngineError(f"{self.base_url}/v1/models lists no model; pass model= explicitly") from exc


def _server_message(resp: httpx.Response) -> str:
    """The error text of an OpenAI-style ({"error": {"message"}}), FastAPI or plain answer."""
    try:
        data = resp.json()
    except ValueError:
        return resp.text[:500] or resp.reason_phrase
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and "message" in err:
            return str(err["message"])
        for key in ("message", "detail", "error"):
            if key in data:
                return str(data[key])
    return str(data)[:500]
