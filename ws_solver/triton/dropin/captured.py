"""What MLIR and Triton print on file descriptor 2 during a compile, collected so that a
failed attempt can be summarised (the drop-in) or recorded (corpus/stock.py)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator

from .session import lock


class Captured:
    """What a `captured_stderr` block printed on fd 2."""

    text = ""

    def replay(self) -> None:
        if self.text:
            sys.stderr.write(self.text)
            sys.stderr.flush()


@contextlib.contextmanager
def captured_stderr() -> Iterator[Captured]:
    """Collect what MLIR/Triton print on file descriptor 2 (diagnostics, crash reproducers)
    so that a failed attempt can be summarised instead of flooding the terminal."""
    captured = Captured()
    with lock:
        sys.stderr.flush()
        try:
            saved = os.dup(2)
        except OSError:  # no usable fd 2: nothing to capture
            yield captured
            return
        with tempfile.TemporaryFile(mode="w+b") as tmp:
            os.dup2(tmp.fileno(), 2)
            try:
                yield captured
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                os.close(saved)
                tmp.seek(0)
                captured.text = tmp.read().decode(errors="replace")
