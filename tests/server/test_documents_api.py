"""The native document API (/api/documents) in an in-process app over a scripted engine that
upper-cases each source: the job's life (upload, SSE progress, result, list, delete), options
reaching the prompts, keys, and every kind of bad upload refused with a clear 4xx that leaves
nothing behind. tests/server/test_documents_protocols.py drives the real server."""
from __future__ import annotations

import functools
import json

import pytest
from documents_support import (
    BILLION_LAUGHS_XLIFF,
    docx_bytes,
    docx_paragraphs,
    job_app,
    srt_bytes,
    wait_for,
    with_entries,
    zip_bomb_docx,
)

from hymt.server.jobs.job import is_job_id


@pytest.fixture
def app(tiny_model_dir, tmp_path):
    return functools.partial(job_app, tiny_model_dir, jobs_dir=str(tmp_path / "jobs"))


def _files(tmp_path) -> list[str]:
    folder = tmp_path / "jobs" / "files"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def _events(client, job_id: str, **kw) -> list[tuple[str, dict]]:
    events = []
    with client.stream("GET", f"/api/documents/{job_id}/events", **kw) as stream:
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in stream.iter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                events.append((name, json.loads(line[5:])))
    return events


def test_a_document_job_from_upload_to_delete(app, tmp_path):
    with app(step_s=0.005) as (client, _):
        upload = client.post("/api/documents", files={"file": ("letter.docx", docx_bytes(["Dear friend.", "Bye."]))},
                             data={"tgt": "de", "src": "en"})
        assert upload.status_code == 201, upload.text
        job = upload.json()
        assert upload.headers["location"] == f"/api/documents/{job['id']}" and is_job_id(job["id"])
        assert (job["filename"], job["format"], job["src"], job["tgt"]) == ("letter.docx", "docx", "en", "de")
        assert job["state"] in ("queued", "translating") and job["progress"]["total"] == 2

        events = _events(client, job["id"])
        names = [name for name, _ in events]
        assert names[-1] == "done" and set(names[:-1]) <= {"progress"} and "progress" in names
        progress = [data["progress"]["done"] for name, data in events if name == "progress"]
        assert progress == sorted(progress), "progress only moves forward"
        done = events[-1][1]
        assert done["state"] == "done" and done["progress"] == {"done": 2, "total": 2}
        assert done["result"] == {"filename": "letter.de.docx", "url": f"/api/documents/{job['id']}/result",
                                  "media_type": "application/vnd.openxmlformats-officedocument."
                                                "wordprocessingml.document"}

        result = client.get(done["result"]["url"])
        assert result.status_code == 200 and result.headers["content-type"] == done["result"]["media_type"]
        assert result.headers["content-disposition"] == 'attachment; filename="letter.de.docx"'
        assert docx_paragraphs(result.content) == ["DEAR FRIEND.", "BYE."]

        second = client.post("/api/documents", files={"file": ("b.srt", srt_bytes(["Hi."]))}, data={"tgt": "fr"})
        listed = client.get("/api/documents").json()["documents"]
        assert [j["id"] for j in listed] == [second.json()["id"], job["id"]], "newest first"

        assert client.delete(f"/api/documents/{job['id']}").json() == {"deleted": True, "id": job["id"]}
        assert client.get(f"/api/documents/{job['id']}").status_code == 404
        assert client.delete(f"/api/documents/{job['id']}").status_code == 404
        assert not any(name.startswith(job["id"]) for name in _files(tmp_path))


def test_options_reach_the_prompts_and_bad_ones_are_refused(app, tmp_path):
    with app() as (client, engines):
        fields = {"tgt": "zh", "src": "en", "glossary": json.dumps({"letter": "信"}), "retry": "false",
                  "options": json.dumps({"context": "A note to a friend.", "sampling": {"max_tokens": 30}})}
        job = client.post("/api/documents", files={"file": ("a.docx", docx_bytes(["The letter came."]))}, data=fields)
        assert job.status_code == 201, job.text
        assert job.json()["options"]["glossary"] == [["letter", "信"]]
        assert job.json()["options"]["sampling"] == {"preset": "greedy", "max_tokens": 30}
        wait_for(lambda: client.get(f"/api/documents/{job.json()['id']}").json()["state"] == "done")
        asked = [(user, params) for user, params in engines[0].prompts if "The letter came." in user]
        assert len(asked) == 1 and "信" in asked[0][0] and asked[0][1].max_tokens == 30

        for data, field, status in [({"src": "en"}, "tgt", 400), ({"tgt": "xx"}, "tgt", 400),
                                    ({"tgt": "de", "glossary": "{not json"}, "glossary", 400),
                                    ({"tgt": "de", "sampling": json.dumps({"temperature": "hot"})},
                                     "sampling.temperature", 422),
                                    ({"tgt": "de", "format": "rtf"}, "format", 400)]:
            refused = client.post("/api/documents", files={"file": ("a.docx", docx_bytes(["Hi."]))}, data=data)
            assert refused.status_code == status and refused.json()["error"]["field"] == field, refused.text
        assert len(client.get("/api/documents").json()["documents"]) == 1
        assert len(_files(tmp_path)) == 2  # the one job's input and result: no upload left behind


HOSTILE = {
    "unsupported type": ("tool.exe", b"MZ\x90\x00", "unsupported file type 'tool.exe'; supported: .ass, .docx"),
    "corrupt": ("broken.docx", b"PK\x03\x04garbage", "docx: "),
    "encrypted": ("secret.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512), "password-protected"),
    "zip bomb": ("bomb.docx", None, "more than the limit of 200x"),
    "billion laughs": ("laughs.xlf", BILLION_LAUGHS_XLIFF, "xliff: "),
    "entry outside the package": ("escape.docx", None, "points outside the package"),
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_files_are_refused_and_leave_nothing(app, tmp_path, kind):
    name, data, message = HOSTILE[kind]
    if kind == "zip bomb":
        data = zip_bomb_docx()
    elif kind == "entry outside the package":
        data = with_entries(docx_bytes(["Refuse me."]), {"../../evil.xml": b"<x/>"})
    with app() as (client, engines):
        refused = client.post("/api/documents", files={"file": (name, data)}, data={"tgt": "de"})
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert message in error["message"] and error["field"] == "file", error
        if kind == "unsupported type":
            assert ".docx" in error["valid"] and ".srt" in error["valid"]
        assert client.get("/api/documents").json() == {"documents": []}
        assert not [user for user, _ in engines[0].prompts if "Refuse me" in user]
    assert _files(tmp_path) == []
    assert not (tmp_path / "evil.xml").exists()


def test_a_client_file_name_never_reaches_a_path(app, tmp_path):
    with app() as (client, _):
        for name in ("../../escape.docx", "..\\..\\escape.docx"):
            job = client.post("/api/documents", files={"file": (name, docx_bytes(["Hi."]))}, data={"tgt": "de"})
            assert job.status_code == 201 and job.json()["filename"] == "escape.docx"
            url = f"/api/documents/{job.json()['id']}"
            done = wait_for(lambda url=url: (j := client.get(url).json())["result"] and j)
            assert done["result"]["filename"] == "escape.de.docx"
    assert all(is_job_id(name.split(".")[0]) for name in _files(tmp_path)) and len(_files(tmp_path)) == 4
    assert not list(tmp_path.rglob("escape*"))


def _multipart(fields: dict[str, str], name: str, data: bytes, boundary: str = "hymtboundary") -> bytes:
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                 "Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode()


def test_size_and_segment_limits(app, tmp_path):
    with app(max_file_mb=0.05, max_segments=3) as (client, _):
        big = docx_bytes(["Hello."]) + bytes(100_000)
        declared = client.post("/api/documents", files={"file": ("big.docx", big)}, data={"tgt": "de"})
        assert declared.status_code == 413 and "--max-file-mb" in declared.json()["error"]["message"]

        body = _multipart({"tgt": "de"}, "big.docx", big + bytes(2_000_000))
        chunks = (body[i:i + 65536] for i in range(0, len(body), 65536))  # no Content-Length: counted as read
        streamed = client.post("/api/documents", content=chunks,
                               headers={"Content-Type": "multipart/form-data; boundary=hymtboundary"})
        assert streamed.status_code == 413 and streamed.json()["error"]["field"] == "file"

        many = client.post("/api/documents", files={"file": ("subs.srt", srt_bytes(["One.", "Two.", "Three.",
                                                                                  "Four.", "Five."]))},
                           data={"tgt": "de"})
        assert many.status_code == 413 and "--max-segments" in many.json()["error"]["message"]
        fits = client.post("/api/documents", files={"file": ("subs.srt", srt_bytes(["One.", "Two."]))},
                           data={"tgt": "de"})
        assert fits.status_code == 201
        assert [j["id"] for j in client.get("/api/documents").json()["documents"]] == [fits.json()["id"]]
    assert all(name.startswith(fits.json()["id"]) for name in _files(tmp_path))


def test_uploads_are_bounded_by_the_file_limit_not_the_body_limit(app):
    with app(max_body_bytes=20_000, max_file_mb=1) as (client, _):
        padded = docx_bytes(["Hello."]) + bytes(100_000)  # past --max-body-bytes, within --max-file-mb
        assert client.post("/api/documents", files={"file": ("a.docx", padded)}, data={"tgt": "de"}).status_code != 413
        huge = client.post("/api/documents", files={"file": ("b.docx", bytes(3_000_000))}, data={"tgt": "de"})
        assert huge.status_code == 413 and huge.json()["error"]["field"] == "file"
        assert "--max-file-mb" in huge.json()["error"]["message"]
        text = client.post("/api/translate", json={"text": "x" * 30_000, "tgt": "de"})
        assert text.status_code == 413 and "--max-body-bytes" in text.json()["error"]["message"]


def test_the_api_key_guards_every_route(app):
    with app(api_keys=("sesame",)) as (client, _):
        document = {"file": ("a.srt", srt_bytes(["Hello."]))}
        assert client.post("/api/documents", files=document, data={"tgt": "de"}).status_code == 401
        wrong = client.post("/api/documents", files=document, data={"tgt": "de", "api_key": "nope"})
        assert wrong.status_code == 401 and wrong.json()["error"]["type"] == "invalid_key"
        by_form = client.post("/api/documents", files=document, data={"tgt": "de", "api_key": "sesame"})
        by_header = client.post("/api/documents", files=document, data={"tgt": "de"},
                                headers={"Authorization": "Bearer sesame"})
        assert by_form.status_code == by_header.status_code == 201
        job_id = by_header.json()["id"]
        for path in ("", f"/{job_id}", f"/{job_id}/result", f"/{job_id}/events"):
            assert client.get(f"/api/documents{path}").status_code == 401, path
        assert client.delete(f"/api/documents/{job_id}").status_code == 401
        events = _events(client, job_id, params={"token": "sesame"})
        assert events[-1][0] == "done"
        assert client.get(f"/api/documents/{job_id}/result", headers={"X-API-Key": "sesame"}).status_code == 200


def test_a_result_asked_too_early_is_409(app):
    with app(step_s=0.05) as (client, _):
        job = client.post("/api/documents", files={"file": ("a.srt", srt_bytes(["A long cue is here."]))},
                          data={"tgt": "de"}).json()
        early = client.get(f"/api/documents/{job['id']}/result")
        assert early.status_code == 409 and early.json()["error"]["type"] == "not_done"
        assert "it is queued" in early.json()["error"]["message"] or "it is translating" in early.json()["error"][
            "message"]


def test_the_real_server_translates_a_docx_with_progress_events(hymt_server):
    """The same life against the session `hymt serve` process with the tiny model."""
    import httpx

    with httpx.Client(base_url=hymt_server.url, timeout=60) as client:
        job = client.post("/api/documents", files={"file": ("memo.docx", docx_bytes(["First point.", "Second."]))},
                          data={"tgt": "ja", "src": "en"}).json()
        events = _events(client, job["id"])
        assert events[-1][0] == "done" and events[-1][1]["progress"] == {"done": 2, "total": 2}
        result = client.get(f"/api/documents/{job['id']}/result")
        assert result.headers["content-disposition"] == 'attachment; filename="memo.ja.docx"'
        assert len(docx_paragraphs(result.content)) == 2
        assert job["id"] in [j["id"] for j in client.get("/api/documents").json()["documents"]]
        assert client.delete(f"/api/documents/{job['id']}").status_code == 200
