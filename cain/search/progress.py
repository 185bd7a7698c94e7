"""The search's live status line on stderr: best plan, nodes, nodes per second, elapsed time."""

from __future__ import annotations

import sys
import time

from cain.search.config import SearchConfig


class Progress:
    """A live status line on stderr: best plan, nodes, nodes per second, elapsed time."""

    def __init__(self, enabled: bool, bound: int = 0):
        self.enabled = enabled
        self.bound = bound
        self.last = 0.0

    def line(self, macros, icws, nodes, elapsed, bus=0, bus2=0) -> None:
        now = time.perf_counter()
        if not self.enabled or now - self.last < 0.25:
            return
        self.last = now
        best = f"{macros} macros / {icws} ICWs" if macros else "no plan yet"
        if macros and bus:
            best += f" / {bus} ICWs at bus level ({bus2} bus2/bus3)"
        best += f" (lower bound {self.bound})"
        rate = nodes / elapsed if elapsed > 0 else 0.0
        sys.stderr.write(f"\rsearch: best {best}, {nodes} nodes, {rate:,.0f} nodes/s, {elapsed:.1f} s   ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def progress_enabled(cfg: SearchConfig) -> bool:
    """Whether to draw the line: as configured, else when stderr is a terminal."""
    if cfg.progress is None:
        return sys.stderr.isatty()
    return bool(cfg.progress)
