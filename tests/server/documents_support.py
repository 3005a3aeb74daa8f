"""What the document-job tests share: documents to upload (well-formed and hostile),
`wait_for`, and `job_app`: an in-process app over a scripted engine that upper-cases each
source (`step_s` slows each engine step, so jobs last long enough to watch)."""
from __future__ import annotations

import contextlib
import io
import time
import zipfile
from pathlib import Path

from fastapi.testclient import TestClient

from hymt.server.app import create_app
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine, source_of

READY_TIMEOUT_S = 60

BILLION_LAUGHS_XLIFF = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file source-language="en" datatype="plaintext"
 original="x"><body><trans-unit id="1"><source>&lol3;</source></trans-unit></body></file></xliff>"""


def docx_bytes(paragraphs: list[str]) -> bytes:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def docx_paragraphs(data: bytes) -> list[str]:
    import docx

    return [p.text for p in docx.Document(io.BytesIO(data)).paragraphs]


def srt_bytes(cues: list[str]) -> bytes:
    blocks = [f"{i}\n00:00:{i:02d},000 --> 00:00:{i:02d},900\n{text}\n" for i, text in enumerate(cues, 1)]
    return "\n".join(blocks).encode("utf-8")


def with_entries(data: bytes, added: dict[str, bytes]) -> bytes:
    """A copy of the zip `data` with more entries."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for entry in source.infolist():
            target.writestr(entry.filename, source.read(entry))
        for name, content in added.items():
            target.writestr(name, content)
    return out.getvalue()


def zip_bomb_docx() -> bytes:
    """A DOCX carrying 16 MB of zeros that pack into a few KB (a ratio far past any document's)."""
    return with_entries(docx_bytes(["Refuse me."]), {"word/media/zeros.bin": bytes(16 * 1024 * 1024)})


def wait_for(condition, timeout: float = 30.0, interval: float = 0.02):
    """Poll `condition()` until it returns something truthy; that value, or AssertionError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {condition}")


class SlowEngine(ScriptedEngine):
    """A ScriptedEngine whose steps take `step_s` (a model's time per token)."""

    def __init__(self, *args, step_s: float = 0.0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.step_s = step_s

    def step(self):
        if self.step_s and self.has_unfinished():
            time.sleep(self.step_s)
        return super().step()


def upper_source(user_turn, params):
    return source_of(user_turn).upper()


@contextlib.contextmanager
def job_app(model_dir: Path, *, jobs_dir: str, step_s: float = 0.0, answer=upper_source, **settings):
    """(TestClient of a ready app, the engines it made), the app's jobs in `jobs_dir`."""
    from hymt.checkpoint import load_checkpoint
    from hymt.translate import Translator

    checkpoint = load_checkpoint(model_dir)
    engines: list[SlowEngine] = []

    def factory(_settings):
        engine = SlowEngine(checkpoint, answer, step_s=step_s)
        engines.append(engine)
        return Translator(str(model_dir), engine=engine, cache=False)

    app = create_app(ServerSettings(model=str(model_dir), jobs_dir=jobs_dir, **settings), translator_factory=factory)
    with TestClient(app) as client:
        wait_for(lambda: client.get("/ready").status_code == 200, READY_TIMEOUT_S)
        yield client, engines
