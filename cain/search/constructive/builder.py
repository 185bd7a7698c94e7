"""The pieces constructive programs are built from: a builder of SSA instructions for an instruction set,
tours over positions, and the single moves between them."""

from __future__ import annotations

from functools import cache, lru_cache

from cain.model.isa import DIRECTIONS, Macro, instruction_set
from cain.model.program import Instr
from cain.search.goals.space import division_macro

Position = tuple[int, int]
_STEP = {offset: name for name, offset in DIRECTIONS.items()}


@lru_cache(maxsize=65536)
def tour(positions: tuple[Position, ...], start: Position | None, final: bool) -> tuple[Position, ...]:
    """The positions in visiting order, nearest neighbour first, from `start` (None: from the origin, to be
    entered anywhere); when `final` the order is built from the origin and reversed, so the walk ends near
    it."""
    left = sorted(p for p in positions if p != start)
    order: list[Position] = []
    here = (0, 0) if final or start is None else start
    while left:
        nxt = min(left, key=lambda p: (abs(p[0] - here[0]) + abs(p[1] - here[1]), p))
        left.remove(nxt)
        order.append(nxt)
        here = nxt
    if final:
        order.reverse()
    return tuple(order) if start is None else (start, *order)


@cache
def _macros(set_name: str) -> tuple[bool, Macro | None]:
    """Whether the set has the fused moves (`mov2x`, `addx`, `add2x`, `subx`, `sub2x`), and its division."""
    macros = instruction_set(set_name)
    return all(m in macros for m in ("mov2x", "addx", "add2x", "subx", "sub2x")), division_macro(macros)


class Builder:
    """SSA instructions for one program; the macros chosen for the instruction set. With `count`, only how
    many (`next` still numbers the values) and a `trace` that determines them (each instruction, and each
    walk as its cached steps' key and operands), which is all that ranking the candidates needs."""

    def __init__(self, set_name: str, first: int, count: bool = False):
        """`first`: the first value id free (the ones below are the program's inputs and bases)."""
        self.all, self.divide = _macros(set_name)
        self.instrs: list[Instr] = []
        self.trace: list[tuple] = []
        self.next = first
        self.count = count

    def op(self, macro: str, operands: tuple[int, ...], directions: tuple[str, ...] = ()) -> int:
        value = self.next
        self.next += 1
        if self.count:
            self.trace.append((macro, operands, directions))
        else:
            self.instrs.append(Instr(macro, (value,), operands, directions))
        return value

    def half(self, value: int) -> int:
        return self.op(self.divide.name, (value,))


def single_moves(dx: int, dy: int) -> list[str]:
    """The directions of single moves shifting every atom by `(dx, dy)`."""
    return [_STEP[(1 if dx > 0 else -1, 0)]] * abs(dx) + [_STEP[(0, 1 if dy > 0 else -1)]] * abs(dy)
