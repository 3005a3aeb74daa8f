"""ScriptedEngine: a stand-in Engine that records prompts and answers from their text.

It answers each prompt from its user turn (by default with the prompt's source text: an
identity "translation"), one token per step, so the Translator's real path (prompts,
AsyncEngine, decoding, cleanup, checks, cache) and everything above it, the server included,
runs without a model. Tests read `prompts` to check what reached the model.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

from hymt.checkpoint import Checkpoint
from hymt.engine.interface import Engine, EngineStats
from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError

#: (user turn, sampling) -> the answer's text.
Answer = Callable[[str, SamplingParams], str]


_STRUCTURED = ("### Source Data\n", "# 数据输入\n")


def source_of(user_turn: str) -> str:
    """The source text of a prompt, for the official templates' layouts: between the
    formatted template's <source> tags, under the structured template's data heading, in the
    personalization template's source block, after an instruction line ending in a colon
    (terminology, context), else after the instruction's blank line (default)."""
    if "<source>" in user_turn:  # the instruction names the tags too: the last pair holds the text
        return user_turn.rsplit("<source>", 1)[1].rsplit("</source>", 1)[0]
    for heading in _STRUCTURED:
        if heading in user_turn:
            return user_turn.rsplit(heading, 1)[1]
    for start, end in _PERSONALIZATION:
        if user_turn.startswith(start):
            return user_turn[len(start):].split(end, 1)[0]
    if "\n\n" in user_turn and not _COLON_LINE.search(user_turn.split("\n\n", 1)[1]):
        return user_turn.split("\n\n", 1)[1]
    found = list(_COLON_LINE.finditer(user_turn))
    return user_turn[found[-1].end():].rstrip("\n") if found else user_turn


_PERSONALIZATION = (("[Source Text]\n", "\n\n[Translation Tasks]"), ("【待翻译文本】\n", "\n\n【翻译任务】"))
_COLON_LINE = re.compile(r"[:：]\n\n?")


class ScriptedEngine(Engine):
    """An Engine whose answers come from `answer(user_turn, params)`.

    Attributes:
        prompts: (user turn, params) of every request, in arrival order.
        prompt_ids: the token ids of every request, in arrival order.
        engine_stats: what `stats()` reports.
    """

    def __init__(self, checkpoint: Checkpoint, answer: Answer | None = None, *,
                 stats: EngineStats | None = None) -> None:
        self.checkpoint = checkpoint
        self.answer: Answer = answer or (lambda user, params: source_of(user))
        self.stop_token_ids = ()
        self.engine_stats = stats or EngineStats()
        self.prompts: list[tuple[str, SamplingParams]] = []
        self.prompt_ids: list[list[int]] = []
        self._live: dict[str, list] = {}  # id -> [prompt ids, answer ids, emitted]
        self._ids = itertools.count()
        self._fail: str | None = None

    def fail_next(self, message: str) -> None:
        """Make the next request fail with an EngineError (a simulated device fault)."""
        self._fail = message

    def add_request(self, prompt_token_ids: Sequence[int], params: SamplingParams,
                    request_id: str | None = None, *, final_only: bool = False) -> str:
        if self._fail is not None:
            message, self._fail = self._fail, None
            raise EngineError(message)
        request_id = request_id or f"s{next(self._ids)}"
        user = self.checkpoint.decode(list(prompt_token_ids), skip_special_tokens=True)
        self.prompts.append((user, params))
        self.prompt_ids.append(list(prompt_token_ids))
        answer = self.checkpoint.encode_text(self.answer(user, params))  # a model writes text
        self._live[request_id] = [list(prompt_token_ids), answer[: params.max_tokens], 0]
        return request_id

    def step(self) -> list[RequestOutput]:
        outputs = []
        for request_id, state in list(self._live.items()):
            prompt, answer, emitted = state
            new = answer[emitted : emitted + 1]
            state[2] = emitted + len(new)
            finished = state[2] >= len(answer)
            outputs.append(
                RequestOutput(
                    request_id, prompt, token_ids=answer[: state[2]], new_token_ids=new, finished=finished,
                    finish_reason="stop" if finished else None,
                )
            )
            if finished:
                del self._live[request_id]
        return outputs

    def abort(self, request_id: str) -> None:
        self._live.pop(request_id, None)

    def has_unfinished(self) -> bool:
        return bool(self._live)

    def stats(self) -> EngineStats:
        return self.engine_stats
