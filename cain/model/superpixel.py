"""The superpixel layout (reference/scamp5-digital.md section 6): a `width x height` tile of PEs is one pixel,
and each value's bits lie on the PEs of one bank of the tile in a bit order, bit 0 first; a DREG plane holds
one value per bank. Per-PE selections are patterns the host loads between kernels (`scamp5_load_pattern`),
whose cover by the SDK's periodic patterns is computed here.

Tile coordinates are (row, column) with row 0 to the north and column 0 to the west, as in a kernel's
matrix; the SDK addresses columns from the east (reference section 3), which `Pattern` accounts for.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from cain.model.dreg import FLAGS

Position = tuple[int, int]
SIDE_STEP: dict[str, Position] = {"north": (-1, 0), "south": (1, 0), "east": (0, 1), "west": (0, -1)}
"""(row, column) step from a PE to its neighbour on each side (a flag `side` reads that neighbour)."""
ARRAY = 256
"""The SCAMP-5 PE array is 256 x 256."""


class LayoutError(ValueError):
    """A tile layout that cannot hold values (the message says what is wrong)."""


@dataclass(frozen=True)
class Layout:
    """A tile of `width x height` PEs and its banks: `banks[b][k]` is the PE holding bit k of bank b's value."""

    width: int
    height: int
    banks: tuple[tuple[Position, ...], ...]

    def __post_init__(self) -> None:
        for size, what in ((self.width, "width"), (self.height, "height")):
            if size < 1 or size & (size - 1) or size > 64:
                raise LayoutError(f"the tile {what} must be a power of 2 from 1 to 64, not {size}")
        if not self.banks or not all(self.banks):
            raise LayoutError("every bank needs at least one bit")
        if len({len(b) for b in self.banks}) > 1:
            raise LayoutError(
                f"every bank must hold the same number of bits (they hold {', '.join(str(len(b)) for b in self.banks)})"
            )
        seen: set[Position] = set()
        for b, bank in enumerate(self.banks):
            for k, (r, c) in enumerate(bank):
                if not (0 <= r < self.height and 0 <= c < self.width):
                    raise LayoutError(
                        f"bank {b} bit {k + 1} lies outside the {self.width}x{self.height} tile"
                    )
                if (r, c) in seen:
                    raise LayoutError(f"the PE at row {r}, column {c} of the tile holds two bits")
                seen.add((r, c))
                if k and abs(r - bank[k - 1][0]) + abs(c - bank[k - 1][1]) != 1:
                    raise LayoutError(
                        f"bank {b}: bit {k + 1} is not next to bit {k} (a carry moves one PE per step)"
                    )

    @property
    def bits(self) -> int:
        return len(self.banks[0])

    def carry_side(self, bank: int, k: int) -> str:
        """The side from which the PE of bit `k` (k >= 1) reads bit k - 1: its carry's direction flag."""
        (r, c), (pr, pc) = self.banks[bank][k], self.banks[bank][k - 1]
        return next(s for s, step in SIDE_STEP.items() if step == (pr - r, pc - c))

    def offset(self, source: int, target: int) -> Position:
        """The (rows, columns) every bit moves from bank `source` to bank `target`: the banks must be
        translates of each other, so one shift of the whole plane moves the value."""
        steps = {
            (t[0] - s[0], t[1] - s[1]) for s, t in zip(self.banks[source], self.banks[target], strict=True)
        }
        if len(steps) != 1:
            raise LayoutError(
                f"banks {source} and {target} are not translates of each other; Cain moves a value between "
                "banks by shifting the whole plane"
            )
        return steps.pop()

    def bank_grid(self) -> list[list[tuple[int, int] | None]]:
        """(bank, bit) of every PE of the tile, None where no bit lies: what a picture draws."""
        grid: list[list[tuple[int, int] | None]] = [[None] * self.width for _ in range(self.height)]
        for b, bank in enumerate(self.banks):
            for k, (r, c) in enumerate(bank):
                grid[r][c] = (b, k)
        return grid


def snake(width: int, height: int, banks: int = 1) -> Layout:
    """Banks as horizontal strips of the tile, each read row by row in a snake (boustrophedon): row 0
    west to east, the next row back, so each bit is next to the one before."""
    if banks < 1 or height % banks:
        raise LayoutError(f"{banks} banks do not split a tile {height} rows high into equal strips")
    rows = height // banks
    out = []
    for b in range(banks):
        bank: list[Position] = []
        for r in range(rows):
            cols = range(width) if r % 2 == 0 else range(width - 1, -1, -1)
            bank += [(b * rows + r, c) for c in cols]
        out.append(tuple(bank))
    return Layout(width, height, tuple(out))


def hilbert(size: int) -> Layout:
    """One bank filling a `size x size` tile along a Hilbert curve from its north-west corner."""
    if size < 1 or size & (size - 1):
        raise LayoutError(f"a Hilbert order needs a power-of-2 square tile, not {size}x{size}")
    points = []
    for d in range(size * size):
        x = y = 0
        t, s = d, 1
        while s < size:
            rx = 1 & (t // 2)
            ry = 1 & (t ^ rx)
            if ry == 0:
                if rx == 1:
                    x, y = s - 1 - x, s - 1 - y
                x, y = y, x
            x += s * rx
            y += s * ry
            t //= 4
            s *= 2
        points.append((x, y))
    return Layout(size, size, (tuple(points),))


ORDERS = ("snake", "hilbert")


def bit_order_layout(width: int, height: int, order: list[list[list[int]]]) -> Layout:
    """The layout of Cain-Java's `bitOrder[bank][row][column]` (row 0 to the north; entry k >= 1 is the PE
    of bit k - 1, 0 where no bit lies)."""
    banks = []
    for b, grid in enumerate(order):
        if len(grid) != height or any(len(row) != width for row in grid):
            raise LayoutError(f"bank {b} of bitOrder is not {height} rows of {width} entries")
        found = {v: (r, c) for r, row in enumerate(grid) for c, v in enumerate(row) if v}
        n = sum(1 for row in grid for v in row if v)
        if sorted(found) != list(range(1, n + 1)):
            raise LayoutError(f"bank {b} of bitOrder must number its PEs 1 to {n}, each once")
        banks.append(tuple(found[k] for k in range(1, n + 1)))
    return Layout(width, height, tuple(banks))


@dataclass(frozen=True)
class Converter:
    """An ADC before the kernel or a DAC after it: the analogue register it reads or writes, the analogue
    scratch register of its constants, its bit depth and the result bit of its least significant bit."""

    register: str
    scratch: str
    bits: int = 8
    unit: int = 0


@dataclass(frozen=True)
class Superpixel:
    """How a superpixel filter's values are held: the tile layout, where each input arrives and each output
    must end (bank numbers), and the DREGs free for data. Every value has `layout.bits` bits and wraps
    modulo 2^bits (two's complement)."""

    layout: Layout
    input_banks: tuple[int, ...]
    output_banks: tuple[int, ...]
    notes: tuple[str, ...] = ()
    """What the C header must say beside the program (e.g. parts of a Java config Cain does not generate)."""
    bias: tuple[int, ...] = ()
    """An integer added to each output after its kernel (in the program's units, 2^depth x the kernel's;
    empty: none)."""
    relu: tuple[bool, ...] = ()
    """Per output, whether a ReLU follows (negative values become 0; empty: none)."""
    adc: Converter | None = None
    """The input converted from an analogue register first (one channel)."""
    dac: Converter | None = None
    """The output converted to an analogue register last (one kernel)."""

    def finish(self, k: int, value: int) -> int:
        """Output `k`'s value (0 to 2^bits - 1) after its bias and ReLU, modulo 2^bits."""
        top = 1 << self.bits
        value = (value + (self.bias[k] if self.bias else 0)) % top
        if self.relu and self.relu[k] and value >= top // 2:
            return 0
        return value

    @property
    def bits(self) -> int:
        return self.layout.bits


# -- patterns ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cube:
    """Tile rows (or columns) whose index matches `value` on the bits not in `free`."""

    value: int
    free: int

    def members(self, size: int) -> list[int]:
        return [i for i in range(size) if (i | self.free) == (self.value | self.free)]


def cubes(size: int) -> list[Cube]:
    """Every cube of indices below `size` (a power of 2), largest first."""
    out = []
    for free in range(size):
        for value in range(size):
            if value & free == 0:
                out.append(Cube(value, free))
    return sorted(out, key=lambda c: (-c.free.bit_count(), c.free, c.value))


def pattern_cover(
    width: int, height: int, ones: set[Position], zeros: set[Position]
) -> list[tuple[Cube, Cube]]:
    """Few (row cube, column cube) pairs whose PEs cover `ones` and miss `zeros` (other PEs are free):
    one pattern load each. Greedy: the pair covering most uncovered PEs first."""
    rows, cols = cubes(height), cubes(width)
    candidates = []
    for rc, cc in itertools.product(rows, cols):
        pes = {(r, c) for r in rc.members(height) for c in cc.members(width)}
        if not pes & zeros and pes & ones:
            candidates.append((rc, cc, pes))
    left, chosen = set(ones), []
    while left:
        rc, cc, pes = max(candidates, key=lambda t: len(t[2] & left))
        chosen.append((rc, cc))
        left -= pes
    return chosen


def load_arguments(width: int, height: int, cube: tuple[Cube, Cube]) -> tuple[int, int, int, int]:
    """`scamp5_load_pattern`'s (r, c, rx, cx) for a cube of tile rows and columns: rows count from the north,
    columns from the east (reference section 3), and the address bits above the tile are free."""
    rc, cc = cube
    col_value = 0
    # the address of tile column j is w - 1 - j in the low bits: complement the column cube's cared bits
    col_value = (~cc.value) & (width - 1) & ~cc.free
    return rc.value, col_value, (ARRAY - height) | rc.free, (ARRAY - width) | cc.free


def carry_flags(
    layout: Layout, bank: int, reverse: bool = False
) -> dict[str, tuple[set[Position], set[Position]]]:
    """Per direction flag, (PEs that must hold 1, PEs that must hold 0) for every PE of `bank` but its
    bit 0 to read the bit before its own: the flags of a carry step (other PEs are free). `reverse`: every
    PE but the top bit's reads the bit after its own (a flood from the top bit down)."""
    need: dict[str, tuple[set[Position], set[Position]]] = {s: (set(), set()) for s in FLAGS}
    cells = layout.banks[bank]
    for k in range(1, layout.bits):
        reader, read = (cells[k - 1], cells[k]) if reverse else (cells[k], cells[k - 1])
        side = next(s for s, step in SIDE_STEP.items() if step == (read[0] - reader[0], read[1] - reader[1]))
        for s in FLAGS:
            need[s][0 if s == side else 1].add(reader)
    return need
