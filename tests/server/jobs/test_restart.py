"""A real `hymt serve` killed with SIGKILL halfway through a document job: the next server on
the same job store finishes the job, and no answer recorded before the kill is asked of the
engine again.

The count: every answer is forced to its full length (ignore_eos), so the engine's
generated_tokens_total of the second server is its warm-up (the same as the first server's:
same model, same greedy warm-up) plus exactly the tokens of the answers recorded after the
restart. An answer asked twice would add its tokens again.
"""
from __future__ import annotations

import array
import json
import signal
import sqlite3
import time

import httpx
import pytest
from documents_support import srt_bytes, wait_for

pytestmark = pytest.mark.slow

WORDS = "one two three four five six seven eight".split()


def _answers(jobs_dir) -> dict[str, int]:
    """The recorded answers: request key -> tokens."""
    try:
        with sqlite3.connect(jobs_dir / "jobs.sqlite3", timeout=5) as db:
            rows = db.execute("SELECT key, token_ids FROM job_outputs").fetchall()
    except sqlite3.OperationalError:  # not created yet
        return {}
    return {key: len(array.array("I", blob)) for key, blob in rows}


def _generated(server) -> int:
    return httpx.get(f"{server.url}/api/status", timeout=10).json()["generated_tokens_total"]


def test_a_killed_server_resumes_the_job_without_asking_twice(tiny_model_dir, server_starter, tmp_path):
    jobs_dir = tmp_path / "jobs"
    for run in ("first", "second"):
        (tmp_path / run).mkdir()
    # Cues of 1..8 words: each answer's limit grows with its source, so answers end one after another.
    cues = [" ".join(WORDS[:n]) + "." for n in range(1, len(WORDS) + 1)]
    fields = {"tgt": "de", "src": "en", "retry": "false", "use_cache": "false",
              "sampling": json.dumps({"ignore_eos": True})}
    with server_starter(tiny_model_dir, tmp_path / "first", "--jobs-dir", str(jobs_dir)) as first:
        warm_up = _generated(first)
        job = httpx.post(f"{first.url}/api/documents", files={"file": ("clip.srt", srt_bytes(cues))}, data=fields,
                         timeout=30).json()
        before_kill = wait_for(lambda: _answers(jobs_dir), timeout=120, interval=0.01)
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(timeout=10)
    recorded = _answers(jobs_dir)
    assert 0 < len(recorded) < len(cues), "the kill must land mid-job"
    assert set(before_kill) <= set(recorded)

    with server_starter(tiny_model_dir, tmp_path / "second", "--jobs-dir", str(jobs_dir)) as second:
        url = f"{second.url}/api/documents/{job['id']}"
        done = wait_for(lambda: (j := httpx.get(url, timeout=10).json())["state"] in ("done", "error") and j,
                        timeout=120, interval=0.2)
        assert done["state"] == "done", done
        assert done["progress"] == {"done": len(cues), "total": len(cues)}
        result = httpx.get(f"{url}/result", timeout=10).text
        assert [line for line in result.splitlines() if "-->" in line] == \
            [line for line in srt_bytes(cues).decode().splitlines() if "-->" in line]
        final = _answers(jobs_dir)
        assert len(final) == len(cues) and {k: final[k] for k in recorded} == recorded
        new_tokens = sum(tokens for key, tokens in final.items() if key not in recorded)
        time.sleep(0.5)  # the engine's counters are read at its next loop turn
        assert _generated(second) == warm_up + new_tokens, "an answer recorded before the kill was asked again"
        log = second.log_text()
        assert "resumed (their server process is gone)" in log
        assert f"resumes with {len(recorded)} answers already recorded" in log
