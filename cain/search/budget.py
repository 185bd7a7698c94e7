"""What a search may spend (`Budget`: seconds, nodes, resident memory) and why it ended (`Stopped`), shared
by the heuristic, the exact searches and the engine."""

from __future__ import annotations

import gc
import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from time import perf_counter


class Stopped(StrEnum):
    """Why a search ended; its value is the word users read (`search: ... within the budget (time)`)."""

    TIME = "time"
    NODES = "nodes"
    MEMORY = "memory"
    OPTIMAL = "optimal"
    """Its best program meets a proven lower bound."""
    EXHAUSTED = "exhausted"
    """No candidates left (the exact search: every length below the plan refuted but for registers)."""
    UPPER = "upper"
    """The exact search over micro-ops: every length below the given upper bound refuted."""
    IMPOSSIBLE = "impossible"
    """Not run: no program of the goal model fits the registers (`cain.search.exact.full`)."""
    HANDOFF = "handoff"
    """The heuristic's plan came within the exact search's reach, which takes the rest of the budget (never the
    answer of a whole search)."""
    ROUND = "round"
    """One round of a restarting traversal ended (never the answer of a whole search)."""
    ERROR = "error"
    """A worker process failed (reported, then raised by the engine)."""


class OutOfBudget(Exception):
    """Raised inside a search when a budget ends; `reason` says which."""

    def __init__(self, reason: Stopped):
        super().__init__(reason)
        self.reason = reason


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_memory() -> int:
    """This process's resident memory now, in bytes (its peak where /proc is not available)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return peak_memory()


def peak_memory() -> int:
    """This process's peak resident memory in bytes (its high-water mark; for a forked worker this
    includes the pages it shares with the parent, so a sum over processes errs on the high side)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@dataclass
class Budget:
    """What one search may spend: `time` seconds from `start`, `nodes` nodes, `memory` bytes of resident
    memory (None: no limit on that), and `grace`, how far past the deadline (a fraction of `time`, at least
    a second) a search may still run to reach its next check point."""

    time: float | None = None
    nodes: int | None = None
    memory: int | None = None
    grace: float = 0.0
    start: float = field(default_factory=perf_counter)

    @property
    def deadline(self) -> float | None:
        return None if self.time is None else self.start + self.time

    def out_of_nodes(self, nodes: int) -> bool:
        """Whether `nodes` nodes searched already use up the node budget."""
        return self.nodes is not None and nodes >= self.nodes

    def late(self, now: float) -> bool:
        """Whether the time budget is spent (never under a node budget alone: the work stays the same)."""
        return self.time is not None and now >= self.start + self.time

    def past_grace(self, now: float) -> bool:
        """Whether the grace after the deadline is spent too."""
        return self.time is not None and now >= self.start + self.time + max(1.0, self.grace * self.time)

    def over_memory(self) -> bool:
        """Whether this process's resident memory is past the limit."""
        return self.memory is not None and resident_memory() > self.memory

    def check_time(self) -> None:
        """Raise `OutOfBudget` once the time budget is spent."""
        if self.late(perf_counter()):
            raise OutOfBudget(Stopped.TIME)

    def check(self, nodes: int) -> None:
        """Raise `OutOfBudget` once `nodes` use up the node budget or the time budget is spent."""
        if self.out_of_nodes(nodes):
            raise OutOfBudget(Stopped.NODES)
        self.check_time()


_SEARCHING = [0]
"""How many `long_lived_tables` contexts are open in this process (a forked worker inherits the count)."""


@contextmanager
def long_lived_tables() -> Iterator[None]:
    """The cyclic garbage collector set for a search, whose tables (goals, memos, the traversal's cache)
    grow to millions of objects that live until it ends and that each collection would traverse again
    (a fifth of the heuristic search's time): young collections run less often, and `settle` freezes what
    survived so far. On exit everything frozen is handed back to the collector, and collected at once when
    the process grew by `COLLECT_GROWTH` or more since the last such collection: left to wait for a full
    collection, the searches' cycles piled up in a process compiling filter after filter (tens of MB a
    digital filter, gigabytes over a campaign, until the memory limit cut its searches short)."""
    threshold = gc.get_threshold()
    gc.set_threshold(10_000, 50, 1000)
    _SEARCHING[0] += 1
    try:
        yield
    finally:
        _SEARCHING[0] -= 1
        if not _SEARCHING[0]:
            gc.unfreeze()
            gc.set_threshold(*threshold)
            if resident_memory() - _COLLECTED[0] >= COLLECT_GROWTH:
                gc.collect()
                _COLLECTED[0] = resident_memory()


COLLECT_GROWTH = 16 << 20
"""Bytes of resident memory the process may gain between two collections at a search's end (a full
collection takes about 25 ms even after a small search, which the test suite runs by the thousand)."""
_COLLECTED = [0]
"""This process's resident memory after the last collection at a search's end."""


def settle() -> None:
    """Inside `long_lived_tables`, move every object alive now out of the collector's sight (they are still
    freed when no longer referenced); a search calls it at its periodic checks."""
    if _SEARCHING[0]:
        gc.freeze()
