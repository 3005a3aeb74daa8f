"""The engine child of an EngineProcess: builds the engine, then steps it for as long as it has work.

The child serves the process that spawned it over a pipe and, when given an EngineAddress,
any number of other processes that connect to it (EngineClient: `hymt serve --http-workers`).
Every client's commands are applied between steps; each step sends every client with
requests in flight one StepReport holding only its own requests (process_messages.py).
Request ids are unique per client only: in the engine a request is `"<client>:<id>"`. A
request the engine refuses becomes a Rejection; a step that raises becomes a StepReport with
`step_error`, and the loop goes on. A client that goes away has its requests aborted; the
spawning process going away (or sending Close) ends the child.
"""
from __future__ import annotations

import dataclasses
import itertools
import logging
import os
import pickle
import queue
import socket
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, Listener

from hymt.engine.interface import Engine, EngineStats
from hymt.engine.process_messages import (
    AbortRequest,
    ChildMessage,
    Close,
    Command,
    EngineAddress,
    EngineSpec,
    ParentMessage,
    Rejection,
    RequestProgress,
    Started,
    StartFailed,
    StepReport,
)
from hymt.errors import EngineError

log = logging.getLogger(__name__)

#: The spawning process's client id: its going away ends the child.
OWNER = 0
#: Reports a connected client may leave unread before it is dropped (its requests aborted):
#: one that stopped reading (hung, stopped) must not stall the engine for the others.
MAX_UNSENT = 10_000


def child_main(conn: Connection, spec: EngineSpec, log_level: int, listen: EngineAddress | None = None) -> None:
    """The child process's entry point."""
    if spec.log_setup is not None:
        spec.log_setup()
    else:
        logging.basicConfig(level=log_level,
                            format="%(asctime)s %(levelname)s %(name)s [engine pid %(process)d]: %(message)s")
    try:
        engine = spec.build()
        listener = _listen(listen) if listen is not None else None
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
        conn.send(StartFailed(picklable(exc)))
        return
    started = Started(spec.backend, os.getpid(), tuple(engine.stop_token_ids), engine.device_name(),
                      engine.memory_report(), engine.stats())
    conn.send(started)
    try:
        ChildLoop(conn, engine, listener, started).run()
    finally:
        if listener is not None:
            listener.close()
        engine.close()


def _listen(address: EngineAddress) -> Listener:
    """A listener on `address`; a socket file left by an engine that died is replaced."""
    try:
        os.unlink(address.path)
    except FileNotFoundError:
        pass
    return Listener(address.path, family="AF_UNIX", authkey=address.authkey)


class _Outbox:
    """A connected client's reports, sent by a thread of their own: the loop never waits on a
    client that reads slowly (the spawning process is sent to directly, as it always was)."""

    def __init__(self, conn: Connection, cid: int):
        self.conn = conn
        self.queue: queue.SimpleQueue[ChildMessage | None] = queue.SimpleQueue()
        threading.Thread(target=self._send, name=f"hymt-engine-send-{cid}", daemon=True).start()

    def _send(self) -> None:
        try:
            while (message := self.queue.get()) is not None:
                self.conn.send(message)
        except Exception:  # noqa: BLE001 - gone (or closed by its reader): the reader says so
            pass

    def hang_up(self) -> None:
        """Stop sending and end the connection, even under a send blocked on a full socket."""
        self.queue.put(None)
        try:
            with socket.socket(fileno=os.dup(self.conn.fileno())) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


@dataclass
class _Client:
    """One connection's side of the loop."""

    conn: Connection
    outbox: _Outbox | None  # None: sent to directly (the spawning process)
    requests: set[str] = field(default_factory=set)  # its ids of the requests it has in the engine
    rejected: list[Rejection] = field(default_factory=list)
    touched: bool = False  # commands applied since its last report


@dataclass(frozen=True)
class _Joined:
    """A connection accepted on the listener (an inbox event, never sent)."""

    conn: Connection


_Event = ParentMessage | _Joined


class ChildLoop:
    """Applies the clients' commands between steps; steps while there is work; reports per client.

    A reader thread per connection drains it into one inbox at all times, so the clients'
    sends never wait on this loop: were both sides blocked sending into full pipes, neither
    would read. Clients that connect to the listener are accepted on a thread of their own,
    and sent to by one (_Outbox).
    """

    def __init__(self, conn: Connection, engine: Engine, listener: Listener | None = None,
                 started: Started | None = None):
        self.engine = engine
        self.clients: dict[int, _Client] = {}
        self.final_only: set[str] = set()  # engine ids of requests whose per-step outputs are not sent
        self.owners: dict[str, tuple[int, str]] = {}  # engine id -> (client, its id): no parsing per output
        self.inbox: queue.SimpleQueue[tuple[int, _Event]] = queue.SimpleQueue()
        self._ids = itertools.count(OWNER + 1)
        self._join(OWNER, conn)
        if listener is not None:
            assert started is not None  # what a connecting client is told first
            threading.Thread(target=self._accept, args=(listener, started), name="hymt-engine-accept",
                             daemon=True).start()

    # -- threads ------------------------------------------------------------------------------
    def _join(self, cid: int, conn: Connection) -> None:
        self.clients[cid] = _Client(conn, _Outbox(conn, cid) if cid != OWNER else None)
        threading.Thread(target=self._read, args=(cid, conn), name=f"hymt-engine-client-{cid}", daemon=True).start()

    def _read(self, cid: int, conn: Connection) -> None:
        try:
            while True:
                message: ParentMessage = conn.recv()
                self.inbox.put((cid, message))
                if isinstance(message, Close):
                    return
        except (EOFError, OSError):  # the client is gone
            self.inbox.put((cid, Close()))
        finally:
            if cid != OWNER:  # a connected client's connection is closed by its reader alone
                conn.close()

    def _accept(self, listener: Listener, started: Started) -> None:
        while True:
            try:
                conn = listener.accept()
                conn.send(started)
            except OSError:  # the listener closed: the loop is over
                return
            except Exception:  # noqa: BLE001 - a client that failed the handshake; others may come
                log.warning("an engine client could not connect", exc_info=True)
                continue
            self.inbox.put((next(self._ids), _Joined(conn)))

    # -- the loop -----------------------------------------------------------------------------
    def run(self) -> None:
        while True:
            waiting = any(c.rejected or c.touched for c in self.clients.values())
            if not self._apply(block=not self.engine.has_unfinished() and not waiting):
                return
            if self.engine.has_unfinished():
                self._step()
            else:  # rejections, or fresh stats after aborts
                self._report({}, self._stats())

    def _apply(self, *, block: bool) -> bool:
        """Apply every waiting event; False once the spawning process said close (or left)."""
        while True:
            try:
                cid, event = self.inbox.get(block=block)
            except queue.Empty:
                return True
            block = False
            if isinstance(event, _Joined):
                self._join(cid, event.conn)
            elif isinstance(event, Close):
                if cid == OWNER:
                    return False
                self._leave(cid)
            elif cid in self.clients:  # commands of a client already gone are dropped
                client = self.clients[cid]
                client.touched = True
                for command in event.commands:
                    self._command(cid, client, command)

    def _command(self, cid: int, client: _Client, command: Command) -> None:
        eid = f"{cid}:{command.request_id}"
        if isinstance(command, AbortRequest):
            if command.request_id in client.requests:
                client.requests.discard(command.request_id)
                self._forget(eid)
            return
        try:
            self.engine.add_request(command.prompt_token_ids, command.params, request_id=eid,
                                    final_only=command.final_only)
        except Exception as exc:  # noqa: BLE001 - fails only this request, in its client
            client.rejected.append(Rejection(command.request_id, picklable(exc)))
            return
        client.requests.add(command.request_id)
        self.owners[eid] = (cid, command.request_id)
        if command.final_only:
            self.final_only.add(eid)

    def _leave(self, cid: int) -> None:
        """A client went away: its requests are aborted, their blocks freed."""
        client = self.clients.pop(cid, None)
        if client is None:
            return
        for rid in client.requests:
            self._forget(f"{cid}:{rid}")
        if client.outbox is not None:
            client.outbox.hang_up()  # its reader then sees the end and closes it
        else:
            client.conn.close()
        log.info("engine client %d left; %d requests aborted", cid, len(client.requests))

    def _forget(self, eid: str) -> None:
        """Abort a request in the engine and drop what the loop keeps of it."""
        self.engine.abort(eid)
        self.final_only.discard(eid)
        self.owners.pop(eid, None)

    def _step(self) -> None:
        try:
            outputs = self.engine.step()
        except Exception as exc:  # noqa: BLE001 - the clients fail what is in flight
            log.exception("engine step failed")
            self._report({}, self._stats(), step_error=f"engine step failed: {exc!r}", stepped=True)
            return
        progress: dict[int, list[RequestProgress]] = {}
        for o in outputs:
            eid = o.request_id
            if eid in self.final_only:
                if not o.finished:
                    continue
                self.final_only.discard(eid)
                new = list(o.token_ids)
            else:
                new = list(o.new_token_ids)
            owner = self.owners.get(eid)
            if owner is None:  # its client left
                continue
            cid, rid = owner
            if o.finished:
                del self.owners[eid]
                self.clients[cid].requests.discard(rid)
            progress.setdefault(cid, []).append((rid, new, o.finish_reason if o.finished else None,
                                                 o.arrival_time, o.first_token_time, o.finish_time))
        self._report(progress, self._stats(), stepped=True)

    def _report(self, progress: dict[int, list[RequestProgress]], stats: EngineStats, step_error: str | None = None,
                *, stepped: bool = False) -> None:
        """One report to each client that progressed, has requests in flight (after a step: its
        reader waits for one), was sent commands, or has rejections."""
        for cid, client in list(self.clients.items()):
            mine = progress.get(cid, [])
            if not (mine or client.rejected or client.touched or (stepped and client.requests)):
                continue
            rejected, client.rejected, client.touched = tuple(client.rejected), [], False
            self._send(cid, client, StepReport.of(mine, rejected, stats, step_error=step_error))

    def _send(self, cid: int, client: _Client, message: ChildMessage) -> None:
        if client.outbox is not None:
            if client.outbox.queue.qsize() >= MAX_UNSENT:
                log.warning("engine client %d left %d reports unread: dropped", cid, MAX_UNSENT)
                self._leave(cid)
            else:
                client.outbox.queue.put(message)
            return
        try:
            client.conn.send(message)
        except (OSError, ValueError):  # gone: its reader thread says so too
            self._leave(cid)

    def _stats(self) -> EngineStats:
        """The engine's counters and this process's CPU time (which the clients cannot see)."""
        return dataclasses.replace(self.engine.stats(), engine_process_cpu_seconds=time.process_time())


def picklable(exc: BaseException) -> BaseException:
    """`exc` if it survives pickling (hymt's errors do), else an EngineError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001
        return EngineError(f"{type(exc).__name__}: {exc}")
