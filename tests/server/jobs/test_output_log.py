"""JobOutputLog: answers put by one log are found by the next one opened on the job."""
from __future__ import annotations

from hymt.server.jobs.job import new_job_id
from hymt.server.jobs.output_log import JobOutputLog
from hymt.server.jobs.store import JobStore
from hymt.translate.output_log import RecordedOutput


def test_answers_outlive_the_log_that_recorded_them(tmp_path):
    job_id, other = new_job_id(), new_job_id()
    first = JobStore(tmp_path)
    log = JobOutputLog(first, job_id)
    assert log.get("a") is None and len(log) == 0
    log.put("a", RecordedOutput((1, 2, 3), "stop"))
    log.put("b", RecordedOutput((4,), "length"))
    JobOutputLog(first, other).put("a", RecordedOutput((9,), "stop"))
    first.close()

    again = JobOutputLog(JobStore(tmp_path), job_id)
    assert len(again) == 2 and again.reused == 0
    assert again.get("a") == RecordedOutput((1, 2, 3), "stop") and again.get("b") == RecordedOutput((4,), "length")
    assert again.get("c") is None and again.reused == 2
