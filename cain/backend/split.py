"""A program longer than the kernel store, cut into a sequence of SDK kernels run one after the other.

The SDK records a kernel's ICWs on a stack of `KERNEL_STORE` (1024, `ICW_STACK_CAP` in
`scamp5_kernel_api.hpp`) shared by every kernel that stays recorded; the analogue registers keep their
values from one kernel to the next, so a long program runs as several kernels. Cuts fall between macros
(never inside a macro's expansion) or, in a bus-level program that is not a macro expansion, between
micro-ops where NEWS holds nothing still to be read (nothing is assumed of NEWS across kernels). Of the
cuts that give the fewest kernels within the limit, those that keep the longest kernel near the shortest
possible (the host's own kernels share the stack while these are recorded), then those where the fewest
registers hold live values.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from cain.dialects.scamp5 import BusMicroOp, KernelOp, MacroOp
from cain.model.isa import NEIGHBOUR_SIDE, NEWS, MicroOp, expand

KERNEL_STORE = 1024
"""ICWs the SCAMP-5 kernel store (the SDK's ICW stack) holds: a longer kernel does not run."""


@dataclass(frozen=True)
class Split:
    """Where a program is cut: kernel `k` runs pieces `starts[k]` up to `starts[k + 1]` (or the end)."""

    starts: tuple[int, ...]
    icws: tuple[int, ...]
    """Each kernel's ICWs."""
    live: tuple[tuple[str, ...], ...]
    """At each cut, the registers holding a value a later kernel reads."""

    @property
    def kernels(self) -> int:
        return len(self.starts)

    def parts(self, pieces: Sequence[Sequence[MicroOp]]) -> list[list[MicroOp]]:
        """Each kernel's micro-ops, from the program's pieces."""
        ends = (*self.starts[1:], len(pieces))
        return [[op for piece in pieces[a:b] for op in piece] for a, b in zip(self.starts, ends, strict=True)]


Piece = list[MacroOp | BusMicroOp]
"""Ops of a kernel that are never cut apart: a macro, or the micro-ops `expand-bus` made of one."""


def kernel_pieces(kernel: KernelOp) -> list[Piece]:
    """The kernel's ops in pieces: each macro, each macro's expansion (its first micro-op marked with it),
    else each micro-op."""
    pieces: list[Piece] = []
    expanded = any("macro" in op.attributes for op in kernel.block.ops if isinstance(op, BusMicroOp))
    for op in kernel.block.ops:
        if isinstance(op, BusMicroOp) and pieces and expanded and "macro" not in op.attributes:
            pieces[-1].append(op)
        elif isinstance(op, MacroOp | BusMicroOp):
            pieces.append([op])
    return pieces


def piece_micro_ops(piece: Piece) -> list[MicroOp]:
    """The micro-ops a piece runs on the device."""
    return [
        m
        for op in piece
        for m in (
            expand(op.MACRO, op.role_registers(), op.direction_names)
            if isinstance(op, MacroOp)
            else [op.micro_op()]
        )
    ]


def _register(name: str) -> str:
    """The register a micro-op operand stands for: a neighbour's NEWS is NEWS."""
    return NEWS if name in NEIGHBOUR_SIDE else name


def live_before(pieces: Sequence[Sequence[MicroOp]], outputs: Sequence[str]) -> list[frozenset[str]]:
    """Before each piece (and at the end), the registers (NEWS among them) whose value is read later."""
    live = set(outputs)
    before = [frozenset(live)]
    for piece in reversed(pieces):
        for op in reversed(piece):
            live.difference_update(_register(d) for d in op.dests)
            live.update(_register(s) for s in op.srcs)
        before.append(frozenset(live))
    return before[::-1]


SLACK = 8
"""ICWs a kernel may exceed the balanced length by (the shortest longest kernel of the fewest), to find
cuts where fewer values are live."""


def split(pieces: Sequence[Sequence[MicroOp]], outputs: Sequence[str], limit: int = KERNEL_STORE) -> Split:
    """The fewest kernels of at most `limit` ICWs each; of those, kernels at most `SLACK` ICWs longer than
    the shortest the fewest allow (the host's own kernels share the SDK's stack while these are recorded),
    cut where the fewest registers are live (summed over the cuts). One kernel when the program fits.
    ValueError when no cut fits the limit."""
    sizes = [len(p) for p in pieces]
    if sum(sizes) <= limit:
        return Split((0,), (sum(sizes),), ())
    live = live_before(pieces, outputs)
    end = [0]
    for size in sizes:
        end.append(end[-1] + size)
    cuts = [j for j in range(1, len(pieces) + 1) if j == len(pieces) or NEWS not in live[j]]
    fewest = len(_cut(end, live, cuts, limit))
    low, high = -(-end[-1] // fewest), limit  # the shortest longest kernel of `fewest` lies in [low, high]
    while low < high:
        middle = (low + high) // 2
        try:
            fits = len(_cut(end, live, cuts, middle)) == fewest
        except ValueError:
            fits = False
        low, high = (low, middle) if fits else (middle + 1, high)
    starts = _cut(end, live, cuts, min(limit, low + SLACK))
    icws = tuple(end[b] - end[a] for a, b in zip(starts, [*starts[1:], len(pieces)], strict=True))
    return Split(tuple(starts), icws, tuple(tuple(sorted(live[s])) for s in starts[1:]))


def _cut(end: Sequence[int], live: Sequence[frozenset[str]], cuts: Sequence[int], limit: int) -> list[int]:
    """Where the kernels start: the fewest of at most `limit` ICWs (`end[j]`: ICWs before piece `j`), then
    the fewest live registers summed over the cuts; only at `cuts`. One pass, a sliding window's minimum."""
    last = len(end) - 1
    best: dict[int, tuple[int, int]] = {0: (0, 0)}  # cut -> (kernels, live registers) of what lies before
    came: dict[int, int] = {}
    window: deque[int] = deque()  # cuts within `limit` ICWs behind, their costs increasing
    for j in [0, *cuts]:
        while window and end[j] - end[window[0]] > limit:
            window.popleft()
        if j:
            if not window:
                raise ValueError(_no_cut(end, j, limit))
            kernels, held = best[window[0]]
            best[j], came[j] = (kernels + 1, held + (len(live[j]) if j < last else 0)), window[0]
        while window and best[window[-1]] >= best[j]:
            window.pop()
        window.append(j)
    starts, j = [], last
    while j:
        j = came[j]
        starts.append(j)
    return starts[::-1]


def _no_cut(end: Sequence[int], j: int, limit: int) -> str:
    """Why no kernel of at most `limit` ICWs ends at cut `j`."""
    return (
        f"no kernel of at most {limit} ICWs can end at ICW {end[j]}: a macro's expansion, or a stretch of "
        f"micro-ops that keeps a value in NEWS, is longer than that; raise max-icws"
    )
