"""What the document-job tests share: documents to upload (well-formed and hostile) and `wait_for`."""
from __future__ import annotations

import io
import time
import zipfile

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
    return with_entries(docx_bytes(["Hello."]), {"word/media/zeros.bin": bytes(16 * 1024 * 1024)})


def wait_for(condition, timeout: float = 30.0, interval: float = 0.02):
    """Poll `condition()` until it returns something truthy; that value, or AssertionError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {condition}")
