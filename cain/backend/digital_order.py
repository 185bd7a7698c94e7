"""Word-level scheduling of a lowered digital program for fewer DREGs live at once.

A plan lowered macro by macro keeps whole values live: every bit of an operand until its adder ends. Bit i
of a ripple-carry sum needs only bits 0..i of its operands and one carry, so the words can run bit plane by
bit plane across all the adders (bit-serial), each input bit dying as soon as the bit planes above it no
longer need it. `reorder` pulls the output bits one bit plane at a time, each word after the words it reads
(depth first), and runs at once every ready word that frees as many bits as it defines (a carry whose cell
is done, a move whose source dies). Direction set-ups are inserted where the moves' side changes, so the
words run exactly as before on every PE: the words are SSA on virtual bits, and only `DNEWS0` reads the
flags.
"""

from __future__ import annotations

from collections.abc import Sequence

from cain.backend.digital import direction_setup
from cain.model.dreg import FLAGS, Word

VARIANTS = ("bit planes", "output by output")
"""The order output bits are pulled in: bit 0 of every output, then bit 1, ...; or every bit of the first
output, then of the second (better when the outputs share little)."""


def directed(words: Sequence[Word]) -> list[tuple[Word, str | None]]:
    """The words without their direction set-ups, each `DNEWS0` with the side it reads."""
    out: list[tuple[Word, str | None]] = []
    set_flags: set[str] = set()
    for w in words:
        if set(w.dests) & set(FLAGS.values()):
            if w.kind == "CLR":
                set_flags -= set(w.dests)
            elif w.kind == "SET":
                set_flags |= set(w.dests)
            else:
                raise ValueError(f"{w}: only CLR and SET may write the direction flags")
            continue
        side = None
        if w.kind == "DNEWS0":
            sides = [s for s, f in FLAGS.items() if f in set_flags]
            if len(sides) != 1:
                raise ValueError(f"{w}: a move must read exactly one side, not {sides}")
            side = sides[0]
        out.append((w, side))
    return out


class Scheduler:
    """The state of one `reorder`: which words are placed, and how many unplaced words read each bit."""

    def __init__(self, items: list[tuple[Word, str | None]], outputs: Sequence[str]):
        self.items = items
        self.outputs = set(outputs)
        self.producer = {d: i for i, (w, _) in enumerate(items) for d in w.dests}
        self.readers: dict[str, list[int]] = {}
        for i, (w, _) in enumerate(items):
            for s in w.srcs:
                self.readers.setdefault(s, []).append(i)
        self.left = {b: len(r) for b, r in self.readers.items()}
        self.placed = [False] * len(items)
        self.order: list[int] = []

    def ready(self, i: int) -> bool:
        return all(s not in self.producer or self.placed[self.producer[s]] for s in self.items[i][0].srcs)

    def net(self, i: int) -> int:
        """Bits word `i` defines that stay live, less the bits it frees."""
        w = self.items[i][0]
        defines = sum(d in self.outputs or self.left.get(d, 0) > 0 for d in w.dests)
        frees = sum(self.left[s] == 1 and s not in self.outputs for s in set(w.srcs))
        return defines - frees

    def children(self, i: int) -> list[int]:
        """The unplaced words that word `i` reads, the one with the most unplaced words below it first (as
        Sethi and Ullman order subtrees): a move of a bit already computed comes last, just before `i`."""
        kids = [self.producer[s] for s in self.items[i][0].srcs if s in self.producer]
        kids = [k for k in dict.fromkeys(kids) if not self.placed[k]]
        return sorted(kids, key=self.cone, reverse=True)

    def cone(self, i: int) -> int:
        """How many unplaced words word `i` needs, itself included."""
        seen, stack = set(), [i]
        while stack:
            j = stack.pop()
            if j not in seen and not self.placed[j]:
                seen.add(j)
                stack += [self.producer[s] for s in self.items[j][0].srcs if s in self.producer]
        return len(seen)

    def pull(self, root: int) -> None:
        """Place `root` after every word it reads (depth first, iteratively)."""
        stack = [(root, False)]
        while stack:
            i, expanded = stack.pop()
            if self.placed[i]:
                continue
            if expanded:
                self.put(i)
                continue
            stack.append((i, True))
            stack += [(k, False) for k in reversed(self.children(i))]

    def put(self, i: int) -> None:
        """Place word `i`, then every ready word it makes free bits without adding any."""
        pending = [i]
        while pending:
            j = pending.pop()
            if self.placed[j] or not self.ready(j):
                continue
            self.placed[j] = True
            self.order.append(j)
            w = self.items[j][0]
            for s in set(w.srcs):
                self.left[s] -= 1
            watch = [r for d in w.dests for r in self.readers.get(d, [])]
            watch += [r for s in set(w.srcs) if self.left[s] == 1 for r in self.readers[s]]
            pending += [r for r in watch if not self.placed[r] and self.ready(r) and self.net(r) <= 0]


def reorder(
    words: Sequence[Word], outputs: Sequence[Sequence[str]], variant: str = VARIANTS[0]
) -> list[Word]:
    """`words` (virtual bits, direction set-ups included) reordered bit plane by bit plane for fewer bits live
    at once: the output bits (`outputs`: each output's bits, bit 0 first) are pulled in the order `variant`
    says. Words nothing reads are dropped; set-ups are inserted where the side of the moves changes."""
    items = directed(words)
    flat = [b for bits in outputs for b in bits]
    sched = Scheduler(items, flat)
    if variant == "bit planes":
        flat = [
            bits[k] for k in range(max(map(len, outputs), default=0)) for bits in outputs if k < len(bits)
        ]
    for b in flat:
        if b in sched.producer:
            sched.pull(sched.producer[b])
    out: list[Word] = []
    side = None
    for i in sched.order:
        w, s = items[i]
        if s is not None and s != side:
            out += direction_setup(s)
            side = s
        out.append(w)
    return out
