"""Shared test material for tests/translate: sample documents.

(A module with a unique name: pytest puts this directory on sys.path.)
"""
from __future__ import annotations

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
