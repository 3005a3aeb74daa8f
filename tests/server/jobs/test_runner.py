"""JobRunner in an in-process app over a scripted engine: a job left by a dead process resumes
with its recorded answers, --max-jobs and admission bound the jobs, a clean stop puts a
running job back in the queue, a job deleted elsewhere stops, finished jobs expire."""
from __future__ import annotations

import socket
import subprocess
import sys
import time

from documents_support import docx_bytes, docx_paragraphs, wait_for

from hymt.server.jobs.job import Job, JobState, new_job_id, options_json
from hymt.server.jobs.store import JobStore
from hymt.translate.options import TranslateOptions
from hymt.translate.output_log import MemoryOutputLog

SENTENCES = ["One is here.", "Two is here.", "Three is here.", "Four is here."]


def _dead_owner() -> str:
    pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                         check=True).stdout.strip()
    return f"{socket.gethostname()}:{pid}:dead"


def _state(client, job_id: str) -> dict:
    return client.get(f"/api/documents/{job_id}").json()


def _finished(client, job_id: str, timeout: float = 30.0) -> dict:
    return wait_for(lambda: (job := _state(client, job_id)).get("state") in ("done", "error") and job, timeout)


def test_a_job_left_by_a_dead_process_resumes_with_its_answers(job_app, tmp_path):
    data = docx_bytes(SENTENCES)
    options = TranslateOptions(retry=False, use_cache=False)
    jobs_dir = tmp_path / "jobs"
    # What the dead process had recorded: the answers to the first two paragraphs, got the way a
    # job gets them (the same Translator call, options as a job keeps them).
    with job_app(jobs_dir=str(jobs_dir)) as (client, engines):
        translator = client.app.state.hymt.service.translator
        log = MemoryOutputLog()
        translator.translate_file(docx_bytes(SENTENCES[:2]), "de", "en", format="docx", options=options, log=log)
    assert len(log.outputs) == 2
    store = JobStore(jobs_dir)
    now = time.time()
    job = Job(id=new_job_id(), key="K", filename="four.docx", format="docx", source="en", target="de",
              options=options_json(options), state=JobState.TRANSLATING, done=2, total=4, chars=50, error=None,
              created=now, updated=now, expires=now + 3600, started=now, owner=_dead_owner(), heartbeat=now)
    store.upload_path(job.id).write_bytes(data)
    store.add(job)
    for key, output in log.outputs.items():
        store.record_output(job.id, key, output)
    store.close()

    with job_app(jobs_dir=str(jobs_dir)) as (client, engines):
        done = _finished(client, job.id)
        assert done["state"] == "done" and done["progress"] == {"done": 4, "total": 4}
        asked = [user for user, _ in engines[0].prompts if "is here" in user]
        assert len(asked) == 2 and all("Three" in u or "Four" in u for u in asked), asked
        result = client.get(f"/api/documents/{job.id}/result")
        assert docx_paragraphs(result.content) == [s.upper() for s in SENTENCES]
        assert 'filename="four.de.docx"' in result.headers["content-disposition"]


def test_max_jobs_and_admission_bound_the_running_jobs(job_app):
    with job_app(step_s=0.01, max_jobs=1) as (client, _):
        ids = [client.post("/api/documents", files={"file": (f"{n}.docx", docx_bytes([f"Letter {n} is here."]))},
                           data={"tgt": "de", "src": "en", "retry": "false"}).json()["id"] for n in range(2)]
        seen, depths = set(), set()
        while True:
            listed = {job["id"]: job["state"] for job in client.get("/api/documents").json()["documents"]}
            states = tuple(listed[i] for i in ids)  # one snapshot of both
            seen.add(states)
            assert states.count("translating") <= 1, states
            depths.add(client.get("/api/status").json()["queue_depth"])
            if states == ("done", "done"):
                break
            time.sleep(0.01)
        assert ("translating", "queued") in seen, seen  # the second waited for the first
        assert 1 in depths and max(depths) == 1, "a running job holds one admission slot"
        assert client.get("/api/status").json()["queue_depth"] == 0


def test_a_clean_stop_puts_the_running_job_back_and_the_next_start_finishes_it(job_app, tmp_path):
    jobs_dir = str(tmp_path / "jobs")
    with job_app(step_s=0.05, jobs_dir=jobs_dir) as (client, _):
        job_id = client.post("/api/documents", files={"file": ("a.docx", docx_bytes(["A long letter is here."]))},
                             data={"tgt": "de", "src": "en"}).json()["id"]
        wait_for(lambda: _state(client, job_id)["state"] == "translating")
    store = JobStore(jobs_dir)
    assert store.get(job_id).state == JobState.QUEUED and store.get(job_id).owner is None
    store.close()
    with job_app(jobs_dir=jobs_dir) as (client, _):
        assert _finished(client, job_id)["state"] == "done"


def test_a_job_deleted_by_another_process_stops(job_app, tmp_path):
    jobs_dir = str(tmp_path / "jobs")
    with job_app(step_s=0.05, jobs_dir=jobs_dir) as (client, engines):
        job_id = client.post("/api/documents", files={"file": ("a.docx", docx_bytes(["A long letter is here."]))},
                             data={"tgt": "de", "src": "en"}).json()["id"]
        wait_for(lambda: engines[0].has_unfinished())
        other = JobStore(jobs_dir)
        other.delete(job_id)
        other.close()
        wait_for(lambda: client.get("/api/status").json()["queue_depth"] == 0, timeout=10)
        wait_for(lambda: not engines[0].has_unfinished(), timeout=5)  # its engine requests were cancelled
        assert client.get(f"/api/documents/{job_id}").status_code == 404


def test_finished_jobs_expire_with_their_files(job_app, tmp_path):
    with job_app(job_ttl_s=1.0) as (client, _):
        job_id = client.post("/api/documents", files={"file": ("a.docx", docx_bytes(["Short."]))},
                             data={"tgt": "de", "src": "en"}).json()["id"]
        assert _finished(client, job_id)["state"] == "done"
        files = tmp_path / "jobs" / "files"
        assert sorted(p.name for p in files.iterdir()) == [f"{job_id}.in", f"{job_id}.out"]
        wait_for(lambda: client.get(f"/api/documents/{job_id}").status_code == 404, timeout=10)
        assert list(files.iterdir()) == []
        assert new_job_id() != job_id
