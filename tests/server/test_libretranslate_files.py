"""LibreTranslate's file translation (/translate_file, /download_file) and its /frontend/settings,
against the session `hymt serve` processes (tests/server/conftest.py). libretranslatepy has no
file call, so httpx sends what LibreTranslate's own front end sends."""
from __future__ import annotations

import httpx
import pytest
from documents_support import srt_bytes

CUES = ["Good morning.", "See you later."]


@pytest.mark.parametrize("prefix", ["", "/libretranslate"])
def test_translate_file_then_download(hymt_server, prefix):
    answer = httpx.post(f"{hymt_server.url}{prefix}/translate_file", timeout=120,
                        files={"file": ("clip.srt", srt_bytes(CUES))}, data={"source": "en", "target": "de"})
    assert answer.status_code == 200, answer.text
    url = answer.json()["translatedFileUrl"]
    assert url.startswith(f"{hymt_server.url}{prefix}/download_file/") and url.endswith(".clip.de.srt")
    download = httpx.get(url, timeout=10)
    assert download.status_code == 200
    assert download.headers["content-disposition"] == 'attachment; filename="clip.de.srt"'
    original = srt_bytes(CUES).decode()
    assert [line for line in download.text.splitlines() if "-->" in line] == \
        [line for line in original.splitlines() if "-->" in line]
    missing = httpx.get(url.replace("/download_file/", "/download_file/0"), timeout=10)
    assert missing.status_code == 404 and "error" in missing.json()


def test_frontend_settings_list_the_registry_formats(hymt_server):
    settings = httpx.get(f"{hymt_server.url}/frontend/settings", timeout=10).json()
    assert settings["filesTranslation"] is True
    assert {".docx", ".pptx", ".xlsx", ".pdf", ".srt", ".xliff", ".po"} <= set(settings["supportedFilesFormat"])


def test_errors_are_libretranslates(hymt_server, limits_server):
    unsupported = httpx.post(f"{hymt_server.url}/translate_file", files={"file": ("x.exe", b"MZ")},
                             data={"source": "auto", "target": "de"}, timeout=30)
    assert unsupported.status_code == 400 and unsupported.json()["error"].startswith("unsupported file type")
    no_target = httpx.post(f"{hymt_server.url}/translate_file", files={"file": ("a.srt", srt_bytes(CUES))},
                           data={"source": "auto"}, timeout=30)
    assert no_target.status_code == 400 and "target" in no_target.json()["error"]
    bad_key = httpx.post(f"{limits_server.url}/translate_file", files={"file": ("a.srt", srt_bytes(CUES))},
                         data={"source": "en", "target": "de", "api_key": "wrong"}, timeout=30)
    assert bad_key.status_code == 403 and bad_key.json() == {"error": "invalid API key"}
