"""JobOutputLog: a job's engine answers in the job store, the SDK's resume mechanism.

`Translator.atranslate_file(..., log=)` looks every engine request up in the log before
submitting it and records each answer as it arrives (hymt/translate/output_log.py). Here an
answer is committed to the job_outputs table the moment it is recorded, so a server killed
mid-job has every finished answer on disk; the job, started again, asks the engine only for
the rest. The keys of the answers already stored are read once, when the log is opened, so
looking up a document's thousands of requests costs a query only for those recorded; the
answers themselves stay on disk (a long document's would take tens of MB as Python ints).
"""
from __future__ import annotations

from hymt.server.jobs.store import JobStore
from hymt.translate.output_log import RecordedOutput


class JobOutputLog:
    """The OutputLog of one job (implements hymt.translate.output_log.OutputLog)."""

    def __init__(self, store: JobStore, job_id: str) -> None:
        self.store, self.job_id = store, job_id
        self._known = store.output_keys(job_id)
        self.reused = 0  # answers found in the log (the job's earlier attempts)

    def get(self, key: str) -> RecordedOutput | None:
        if key not in self._known:
            return None
        found = self.store.output(self.job_id, key)
        if found is not None:
            self.reused += 1
        return found

    def put(self, key: str, output: RecordedOutput) -> None:
        self.store.record_output(self.job_id, key, output)
        self._known.add(key)

    def __len__(self) -> int:
        return len(self._known)
