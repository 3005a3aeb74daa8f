"""JobStore: rows, files named by id, claiming, requeueing, expiry and the recorded answers;
the job's options round trip; which owners count as gone."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from hymt.server.jobs.job import Job, JobState, display_name, is_job_id, new_job_id, options_from_json, options_json
from hymt.server.jobs.owner import STALE_AFTER_S, owner_gone, owner_token
from hymt.server.jobs.store import JobStore
from hymt.translate.options import TranslateOptions
from hymt.translate.output_log import RecordedOutput
from hymt.translate.sampling_policy import Sampling


def _job(store: JobStore, created: float, data: bytes = b"doc") -> Job:
    job_id = new_job_id()
    store.upload_path(job_id).write_bytes(data)
    job = Job(id=job_id, key="K", filename="a.srt", format="srt", source=None, target="de",
              options=options_json(TranslateOptions()), state=JobState.QUEUED, done=0, total=3, chars=10,
              error=None, created=created, updated=created, expires=created + 100)
    store.add(job)
    return job


@pytest.fixture
def store(tmp_path):
    s = JobStore(tmp_path / "jobs")
    yield s
    s.close()


def test_jobs_are_kept_with_their_file_named_by_id(store):
    older, newer = _job(store, 1.0, b"first"), _job(store, 2.0)
    assert [j.id for j in store.all()] == [newer.id, older.id]
    assert store.get(older.id) == older
    assert store.input_path(older.id).read_bytes() == b"first"
    assert not store.upload_path(older.id).exists()
    assert sorted(p.name for p in store.files.iterdir()) == sorted(f"{j.id}.in" for j in (older, newer))
    assert store.get("../../etc/passwd") is None and not store.delete("../x")
    with pytest.raises(ValueError):
        store.input_path("../../etc/passwd")


def test_claim_takes_the_oldest_queued_job_once(store):
    first, second = _job(store, 1.0), _job(store, 2.0)
    claimed = store.claim_next("me", now=5.0)
    assert claimed.id == first.id and claimed.state == JobState.TRANSLATING and claimed.owner == "me"
    assert store.claim_next("other", now=5.0).id == second.id
    assert store.claim_next("me") is None


def test_heartbeat_finish_and_fail_belong_to_the_owner(store):
    job = _job(store, 1.0)
    store.claim_next("me", now=2.0)
    assert not store.heartbeat(job.id, "other", 1, 3)
    assert store.heartbeat(job.id, "me", 2, 4, now=3.0)
    assert (store.get(job.id).done, store.get(job.id).total, store.get(job.id).heartbeat) == (2, 4, 3.0)
    assert store.finish(job.id, "me", result_name="a.de.srt", media_type="text/plain", total=4, ttl_s=50, now=4.0)
    done = store.get(job.id)
    assert (done.state, done.done, done.total, done.expires, done.owner) == (JobState.DONE, 4, 4, 54.0, None)
    assert not store.fail(job.id, "me", "too late", ttl_s=50)


def test_requeue_gives_back_only_the_gone_owners_jobs(store):
    mine, theirs = _job(store, 1.0), _job(store, 2.0)
    store.claim_next("alive", now=3.0)
    store.claim_next("dead", now=3.0)
    assert store.requeue(lambda owner, beat: owner == "dead", ttl_s=10, now=4.0) == [theirs.id]
    assert store.get(theirs.id).state == JobState.QUEUED and store.get(theirs.id).expires == 14.0
    assert store.get(mine.id).state == JobState.TRANSLATING


def test_expiry_spares_running_jobs_and_deleting_removes_everything(store):
    done, running = _job(store, 1.0), _job(store, 2.0)
    store.claim_next("me")
    store.claim_next("me")
    store.finish(done.id, "me", result_name="x", media_type="y", total=1, ttl_s=1, now=10.0)
    store.result_path(done.id).write_bytes(b"out")
    store.record_output(done.id, "k", RecordedOutput((1, 2), "stop"))
    assert store.expired(now=10.5) == [] and store.expired(now=12.0) == [done.id]  # not the running one
    assert store.delete(done.id)
    assert store.get(done.id) is None and store.outputs(done.id) == {}
    assert not store.result_path(done.id).exists() and not store.input_path(done.id).exists()
    assert store.get(running.id) is not None


def test_recorded_outputs_survive_reopening(tmp_path):
    first = JobStore(tmp_path)
    job = _job(first, 1.0)
    first.record_output(job.id, "a", RecordedOutput((5, 70000, 3), "length"))
    first.record_output(job.id, "b", RecordedOutput((), "stop"))
    first.close()
    again = JobStore(tmp_path)
    assert again.outputs(job.id) == {"a": RecordedOutput((5, 70000, 3), "length"), "b": RecordedOutput((), "stop")}
    again.close()


def test_stray_files_are_those_of_no_job(store):
    job = _job(store, 1.0)
    stray = store.files / f"{new_job_id()}.part"
    stray.write_bytes(b"cut short")
    old = time.time() - 1000
    os.utime(stray, (old, old))
    os.utime(store.input_path(job.id), (old, old))
    assert store.stray_files(older_than=time.time() - 10) == [stray]
    assert store.stray_files(older_than=old - 10) == []


def test_options_round_trip_through_json():
    options = TranslateOptions(glossary={"cat": "Katze"}, context="A pet shop.", template="formatted",
                               sampling=Sampling(preset="official", max_tokens=40, ignore_eos=True),
                               use_cache=False, retry=False)
    assert options_from_json(options_json(options)) == options
    assert options_from_json(options_json(TranslateOptions())) == TranslateOptions()


def test_client_file_names_are_only_shown():
    assert display_name("../../etc/passwd.docx") == "passwd.docx"
    assert display_name("C:\\Users\\me\\report.docx") == "report.docx"
    assert display_name("a\x00b\nc.srt") == "abc.srt"
    assert display_name("..") == "" and display_name(None) == ""
    assert is_job_id(new_job_id()) and not is_job_id("../" + new_job_id()[3:])


def test_owner_gone():
    me = owner_token()
    now = time.time()
    assert not owner_gone(me, now, now, me)
    assert not owner_gone("elsewhere:123:abcd", now, now, me)  # another host: its heartbeat is fresh
    assert owner_gone("elsewhere:123:abcd", now - STALE_AFTER_S - 1, now, me)
    assert owner_gone(None, None, now, me)
    host, pid, _ = me.split(":")
    assert owner_gone(f"{host}:{pid}:0000", now, now, me), "our own pid under another nonce: a previous process"
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True)
    assert owner_gone(f"{socket.gethostname()}:{finished.stdout.strip()}:beef", now, now, me)
    assert not owner_gone(f"{socket.gethostname()}:{os.getppid()}:beef", now, now, me)  # a live process
