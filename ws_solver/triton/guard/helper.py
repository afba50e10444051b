"""The compiling process's handle on the lowering guard's helper process (see client.py):
requests sent as length-prefixed pickles, each with an id; a thread of its own reads the
answers and hands each to the probe that sent its request, so that several probes wait at
once; a request given up is cancelled in the helper."""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ...core.envvars import without_activation
from ...core.processes import python_command
from .server import IDLE_S, Reader, send, send_bytes

STARTUP_TIMEOUT_S = 120.0  # importing Triton on a loaded machine; not the lowering's limit


class ServerGone(RuntimeError):
    """The helper is not there; ``retry``: it was idle, so starting another may help."""

    def __init__(self, message: str, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


class ServerHandle:
    """The parent's handle on one helper process (length-prefixed pickles over pipes): a
    thread reads its answers and hands each to the probe that sent its request id."""

    def __init__(self, proc: subprocess.Popen, log: Any) -> None:
        self.proc = proc
        self.log = log  # the server's own stderr (import errors), read when it fails
        self.owner = os.getpid()
        self._changed = threading.Condition()
        self._hello: dict | None = None
        self._answers: dict[int, dict] = {}
        self._waiting: set[int] = set()
        self._gone: ServerGone | None = None
        self._ids = itertools.count(1)
        self._sending = threading.Lock()
        assert proc.stdout is not None
        self._reader = Reader(proc.stdout.fileno())
        threading.Thread(target=self._read, name="ws_solver-guard", daemon=True).start()

    @staticmethod
    def start() -> ServerHandle:
        if not hasattr(os, "fork"):
            raise ServerGone("os.fork is not available on this platform", retry=False)
        root = str(Path(__file__).resolve().parents[3])
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from ws_solver.triton.guard.server import _serve; _serve()"
        )
        log = tempfile.TemporaryFile()  # noqa: SIM115 (open for the helper's lifetime)
        proc = subprocess.Popen(
            python_command([root], code=code),  # the working directory out of sys.path
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,  # its children die with it and not with ^C
            close_fds=True,
            env=without_activation(),  # it builds what it is asked, never through the drop-in
        )
        # Not "" (this process's working directory, where `python -c` or a REPL puts it).
        sys_path = [p for p in sys.path if p]
        send(proc.stdin, {"sys_path": sys_path, "idle_s": IDLE_S})
        return ServerHandle(proc, log)

    def usable(self) -> bool:
        return self.owner == os.getpid() and self.proc.poll() is None and self._gone is None

    def _read(self) -> None:
        """The reader thread: the hello, then answers by request id, until the end."""
        try:
            while True:
                message = self._reader.next(None)
                with self._changed:
                    if "id" in message:
                        if message["id"] in self._waiting:  # else: its prober gave up
                            self._answers[message["id"]] = message["verdict"]
                    else:
                        self._hello = message
                    self._changed.notify_all()
        except Exception:  # the end of its stdout (EOFError), or a stream closed under us
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=30)
            with self._changed:
                self._gone = self._gone or ServerGone(self._why_gone(), retry=False)
                self._changed.notify_all()

    def hello(self, timeout_s: float = STARTUP_TIMEOUT_S) -> dict:
        """The helper's first message ({"ready": True, "pid": ...} once Triton is imported),
        waited for up to ``timeout_s``; ServerGone if it ended or did not say it in time."""
        with self._changed:
            self._changed.wait_for(
                lambda: self._hello is not None or self._gone is not None, timeout_s
            )
            if self._hello is not None:
                return self._hello
            if self._gone is not None:
                raise self._gone
        raise ServerGone(f"the helper did not start in {timeout_s:g} s", retry=False)

    def ask(self, request: dict, timeout_s: float, flight: Any = None) -> dict:
        """Send one request and wait ``timeout_s`` for its answer (TimeoutError if none);
        ``flight.asked`` says where it went, for `cancel`."""
        hello = self.hello()
        if not hello.get("ready"):
            raise ServerGone(f"the helper could not start: {hello.get('error')}", retry=False)
        with self._changed:
            request_id = next(self._ids)
            self._waiting.add(request_id)
        answered = False
        try:
            payload = pickle.dumps({**request, "id": request_id}, protocol=pickle.HIGHEST_PROTOCOL)
            try:
                with self._sending:
                    send_bytes(self.proc.stdin, payload)
            except (OSError, ValueError) as e:  # it exited while idle (IDLE_S): start another
                raise ServerGone(f"the helper is gone ({e})", retry=True) from e
            if flight is not None:
                flight.asked = (self, request_id)
                if flight.cancelled:  # cancelled while it was being sent
                    self.cancel(request_id)
            deadline = time.monotonic() + timeout_s
            with self._changed:
                while request_id not in self._answers:
                    if self._gone is not None:
                        raise self._gone
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError
                    self._changed.wait(left)
                answered = True
                return self._answers.pop(request_id)
        finally:
            with self._changed:
                self._waiting.discard(request_id)
                self._answers.pop(request_id, None)
            if not answered:  # Ctrl-C, a timeout: its child is of no use any more
                self.cancel(request_id)

    def cancel(self, request_id: int) -> None:
        """Ask the helper to kill the child of ``request_id`` (it answers `cancelled`)."""
        with contextlib.suppress(Exception), self._sending:
            send(self.proc.stdin, {"cancel": request_id})

    def _why_gone(self) -> str:
        status = self.proc.returncode
        tail = ""
        with contextlib.suppress(OSError, ValueError):
            self.log.seek(0)
            tail = self.log.read().decode(errors="replace").strip().splitlines()[-1:]
            tail = tail[0] if tail else ""
        return f"the helper process ended (status {status})" + (f": {tail}" if tail else "")

    def close(self) -> None:
        if self.owner != os.getpid():  # a forked copy of the parent: not ours to stop
            return
        with self._changed:  # probes waiting on it may try the next helper
            self._gone = self._gone or ServerGone("the helper was stopped", retry=True)
            self._changed.notify_all()
        # Its children lead groups of their own; they die with it (PR_SET_PDEATHSIG).
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout, self.log):
            with contextlib.suppress(Exception):
                stream.close()
