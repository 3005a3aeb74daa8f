"""Shared test material for tests/translate: sample documents and a scripted stand-in engine.

`ScriptedEngine` is an `Engine` that answers each prompt from its text (by default with the
prompt's source text: an identity "translation"), one token per step, so the Translator's
real path (prompts, AsyncEngine, decoding, cleanup, checks, cache) runs without a model.
(A module with a unique name: pytest puts this directory on sys.path.)
"""
from __future__ import annotations

import itertools
from collections.abc import Callable

from hymt.engine.interface import Engine
from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams

SAMPLES = {
    "english": (
        "Mr. Smith paid $3.14 for it on Jan. 5. Dr. Who? He lives in the U.S. with Mrs. Jones!\n"
        "\"Yes,\" she said. It costs 2.5 million, e.g. a lot. J. K. Rowling wrote it...\n\n"
        "   Indented second paragraph.  Two spaces after.\r\n\r\n\n1. First item\n2) Second item\n"
    ),
    "chinese": "今天天气真好。我们去公园吧！“你来吗？”他问。\n\n第二段：价格是3.5元（含税。）结束",
    "japanese": "こんにちは。「元気ですか？」と彼は言った。今日はいい天気ですね！明日は雨でしょう。",
    "thai": "สวัสดีครับวันนี้อากาศดีมาก ผมจะไปเที่ยวทะเลกับครอบครัว ขอบคุณ",
    "khmer_burmese": "ខ្ញុំស្រលាញ់ប្រទេសកម្ពុជា។ ថ្ងៃនេះអាកាសធាតុល្អ។\nမင်္ဂလာပါ။ နေကောင်းလား။",
    "mixed_whitespace": "\n\n  Leading blank lines.\tTab here. \n\nTrailing spaces.   \n\n\n",
}

MARKDOWN = """---
title: Front matter stays
---
# A heading #

Some text that
wraps over two lines. Another sentence.

- item one
- [ ] task two
  continued here
  1. nested item

```python
print("code is not translated")
```

    indented code block

| Name | Value |
|------|:-----:|
| cell one | cell two |

> A quote. With two sentences.
***
[ref]: https://example.com
<div class="note">Inline <b>html</b> too.</div>
"""

SRT = """1
00:00:01,000 --> 00:00:02,500
Hello there.
How are you?

2
00:00:03,000 --> 00:00:04,000
- Fine. - Good.

10
00:01:03,000 --> 00:01:04,000
<i>Bye!</i>
"""

HTML = (
    "<!DOCTYPE html><html><head><title>Page title</title><style>p{color:red}</style></head>"
    "<body><p>Hello <b>world</b>. Nice day.</p><!-- a comment --><script>var s = 'not text';</script>"
    "<pre>keep   this</pre>&nbsp;<p>Last &amp; final.</p></body></html>"
)


Answer = Callable[[str, SamplingParams], str]


def source_of(user_turn: str) -> str:
    """The source text of a default-template prompt: everything after the instruction."""
    return user_turn.split("\n\n", 1)[1]


class ScriptedEngine(Engine):
    def __init__(self, checkpoint, answer: Answer | None = None) -> None:
        self.checkpoint = checkpoint
        self.answer = answer or (lambda user, params: source_of(user))
        self.stop_token_ids = ()
        self.prompts: list[tuple[str, SamplingParams]] = []  # (user turn, params) per request
        self._live: dict[str, list] = {}  # id -> [prompt ids, answer ids, emitted]
        self._ids = itertools.count()

    def add_request(self, prompt_token_ids, params, request_id=None, *, final_only=False) -> str:
        request_id = request_id or f"s{next(self._ids)}"
        user = self.checkpoint.decode(list(prompt_token_ids), skip_special_tokens=True)
        self.prompts.append((user, params))
        answer = self.checkpoint.encode(self.answer(user, params))
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
