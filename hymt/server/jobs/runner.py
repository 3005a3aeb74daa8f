"""JobRunner: document jobs run as tasks in the server's event loop, through the one Translator.

- **Queue.** A submitted job is `queued`. The runner claims the oldest queued job whenever it
  runs fewer than --max-jobs, the model is ready and admission has room; a running job holds
  one admission slot (it counts in /api/status's queue_depth), so jobs never take the whole
  queue from interactive requests. Several server processes may share one store: claiming is
  one transaction, so each job runs in one of them.
- **Resume.** Every engine answer is committed to the job's OutputLog (output_log.py) as it
  arrives. A job whose process died goes back to the queue (owner.py): at start for this
  host's dead processes, and at every sweep; started again, it finds its answers and asks
  the engine only for the rest. A server stopped cleanly puts its running jobs back itself.
- **Expiry.** Finished jobs and their files are deleted --job-ttl seconds after they finish
  (queued ones that long after submission), swept every SWEEP_S at most.
- **Progress** comes from the Translator's progress callback, kept in memory for this
  process's jobs and written to the store with each heartbeat (other processes read it
  there). `wait_change` wakes the SSE streams.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from dataclasses import replace
from pathlib import Path

from fastapi import Request

from hymt.errors import EngineError, InvalidInputError
from hymt.languages import Language
from hymt.server.admission import Admission
from hymt.server.jobs.intake import inspect_document, resolve_format
from hymt.server.jobs.job import Job, JobState, new_job_key, options_from_json, options_json
from hymt.server.jobs.output_log import JobOutputLog
from hymt.server.jobs.owner import HEARTBEAT_S, owner_gone, owner_token
from hymt.server.jobs.store import JobStore
from hymt.server.jobs.upload import Upload
from hymt.server.service import ModelService
from hymt.server.settings import ServerSettings
from hymt.translate.cache import default_cache_path
from hymt.translate.options import TranslateOptions

logger = logging.getLogger(__name__)

#: Seconds between looks for queued jobs (other processes' submissions, the model turning ready).
POLL_S = 1.0
#: The longest time between expiry sweeps.
SWEEP_S = 60.0


def default_jobs_dir() -> Path:
    """The job store beside the translation cache: `<cache dir>/jobs`."""
    return default_cache_path().parent / "jobs"


class JobRunner:
    """The document jobs of one server process."""

    def __init__(self, settings: ServerSettings, service: ModelService, admission: Admission) -> None:
        self.settings, self.service, self.admission = settings, service, admission
        self.directory = Path(settings.jobs_dir) if settings.jobs_dir else default_jobs_dir()
        self.owner = owner_token()
        self._store: JobStore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._live: dict[str, tuple[int, int]] = {}  # job id -> (done, total) of running jobs
        self._wake = asyncio.Event()
        self._changed = asyncio.Event()
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Resume the store's jobs, if there is a store yet (one is made on the first upload)."""
        if JobStore.exists_at(self.directory):
            self.store()

    def store(self) -> JobStore:
        """The job store, opened (and the runner's loop started) on first use."""
        if self._store is None:
            self._store = JobStore(self.directory)
            self._loop = asyncio.get_running_loop()
            self._loop_task = self._loop.create_task(self._run_loop(), name="hymt-jobs")
        return self._store

    async def close(self) -> None:
        """Stop: running jobs are cancelled and put back in the queue for the next start."""
        self._closed = True
        tasks = [t for t in (self._loop_task, *self._tasks.values()) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._store is not None:
            requeued = self._store.requeue(lambda owner, beat: owner == self.owner, ttl_s=self.settings.job_ttl_s)
            if requeued:
                logger.info("document jobs put back in the queue for the next start: %s", ", ".join(requeued))
            self._store.close()

    # -- jobs --------------------------------------------------------------------------------

    async def accept(self, upload: Upload, *, target: Language, source: Language | None,
                     options: TranslateOptions, format_name: str | None = None) -> Job:
        """A new queued job for a received upload, once the file passed intake (its format,
        readable, not too many segments: 4xx otherwise). The upload's file is removed when
        the document is refused."""
        store = self.store()
        try:
            fmt = resolve_format(upload.filename, format_name)
            data = await asyncio.to_thread(store.upload_path(upload.job_id).read_bytes)
            facts = await asyncio.to_thread(inspect_document, data, fmt, self.settings.max_segments)
            now = time.time()
            job = Job(id=upload.job_id, key=new_job_key(), filename=upload.filename, format=fmt.name,
                      source=source.code if source else None, target=target.code, options=options_json(options),
                      state=JobState.QUEUED, done=0, total=facts.segments, chars=facts.chars, error=None,
                      created=now, updated=now, expires=now + self.settings.job_ttl_s)
            await asyncio.to_thread(store.add, job)
        except BaseException:
            store.upload_path(upload.job_id).unlink(missing_ok=True)
            raise
        self._wake.set()
        self._notify()
        logger.info("document job %s queued: %s, %d bytes, about %d segments", job.id, job.format, upload.size,
                    job.total)
        return job

    def discard(self, upload: Upload) -> None:
        """Remove a received upload that will not become a job (its fields were refused)."""
        self.store().upload_path(upload.job_id).unlink(missing_ok=True)

    def get(self, job_id: str) -> Job | None:
        job = self.store().get(job_id)
        return self._with_live(job) if job is not None else None

    def all(self) -> list[Job]:
        return [self._with_live(job) for job in self.store().all()]

    async def delete(self, job_id: str) -> bool:
        task = self._tasks.get(job_id)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        found = await asyncio.to_thread(self.store().delete, job_id)
        self._notify()
        return found

    async def wait_change(self, timeout: float) -> None:
        """Return at the next change of any job of this process, or after `timeout` seconds."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)

    def _with_live(self, job: Job) -> Job:
        live = self._live.get(job.id)
        if live is None or job.state != JobState.TRANSLATING:
            return job
        return replace(job, done=live[0], total=live[1])

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    # -- the loop ----------------------------------------------------------------------------

    async def _run_loop(self) -> None:
        next_sweep = 0.0
        while not self._closed:
            try:
                if time.monotonic() >= next_sweep:
                    await asyncio.to_thread(self._sweep)
                    next_sweep = time.monotonic() + min(SWEEP_S, max(1.0, self.settings.job_ttl_s / 4))
                self._fill()
            except Exception:  # a full disk or a locked database must not end the loop
                logger.exception("document job loop")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_S)
            self._wake.clear()

    def _sweep(self) -> None:
        store, now, me = self.store(), time.time(), self.owner
        requeued = store.requeue(lambda owner, beat: owner_gone(owner, beat, now, me), ttl_s=self.settings.job_ttl_s)
        if requeued:
            logger.info("document jobs resumed (their server process is gone): %s", ", ".join(requeued))
        for job_id in store.expired(now):
            store.delete(job_id)
            logger.info("document job %s expired", job_id)
        for path in store.stray_files(older_than=now - self.settings.job_ttl_s):
            path.unlink(missing_ok=True)

    def _fill(self) -> None:
        while (len(self._tasks) < self.settings.max_jobs and self.service.ready and not self._closed
               and self.admission.active < self.admission.limit):
            job = self.store().claim_next(self.owner)
            if job is None:
                return
            self.admission.acquire()
            self._live[job.id] = (job.done, job.total)
            self._tasks[job.id] = asyncio.get_running_loop().create_task(self._run(job), name=f"hymt-job-{job.id}")
            self._notify()

    async def _run(self, job: Job) -> None:
        store = self.store()
        beat = asyncio.get_running_loop().create_task(self._heartbeat(job.id))
        try:
            await self._translate(store, job)
        except asyncio.CancelledError:
            raise
        except InvalidInputError as exc:  # the options do not suit the model, or the file changed
            self._fail(store, job, str(exc))
        except EngineError as exc:
            self._fail(store, job, f"engine error: {exc}")
        except Exception as exc:
            logger.exception("document job %s failed", job.id)
            self._fail(store, job, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            beat.cancel()
            self.admission.release()
            self._tasks.pop(job.id, None)
            self._live.pop(job.id, None)
            self._notify()
            self._wake.set()

    async def _translate(self, store: JobStore, job: Job) -> None:
        translator = self.service.require_ready()
        data = await asyncio.to_thread(store.input_path(job.id).read_bytes)
        log = await asyncio.to_thread(JobOutputLog, store, job.id)
        if len(log):
            logger.info("document job %s resumes with %d answers already recorded", job.id, len(log))
        result = await translator.atranslate_file(
            data, job.target, job.source or "auto", format=job.format,
            filename=job.filename or f"document.{job.format}", options=options_from_json(job.options),
            progress=functools.partial(self._progress, job.id), log=log)
        await asyncio.to_thread(store.result_path(job.id).write_bytes, result.data)
        total = result.translated_segments
        if store.finish(job.id, self.owner, result_name=result.filename, media_type=result.media_type, total=total,
                        ttl_s=self.settings.job_ttl_s):
            logger.info("document job %s done: %d segments, %d answers reused, %.1f s", job.id, total, log.reused,
                        result.elapsed_s)

    def _fail(self, store: JobStore, job: Job, message: str) -> None:
        logger.warning("document job %s failed: %s", job.id, message)
        store.fail(job.id, self.owner, message, ttl_s=self.settings.job_ttl_s)

    def _progress(self, job_id: str, done: int, total: int) -> None:
        # Called on the event loop by the SDK's drivers; handed to it in case a later driver
        # reports from a worker thread (asyncio events are not thread-safe).
        self._live[job_id] = (done, total)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._notify)

    async def _heartbeat(self, job_id: str) -> None:
        """Write progress and liveness; cancel the job when its row is gone (deleted
        elsewhere) or no longer this process's."""
        store = self.store()
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            done, total = self._live.get(job_id, (0, 0))
            if not await asyncio.to_thread(store.heartbeat, job_id, self.owner, done, total):
                task = self._tasks.get(job_id)
                if task is not None:
                    task.cancel()
                return


def jobs_of(request: Request) -> JobRunner:
    """The app's JobRunner (create_app puts it on app.state)."""
    return request.app.state.jobs
