"""Register allocation on the DREG file, for the digital mode's words and the superpixel mode's items alike:
a linear scan of virtual values (`%n`: bits, or whole planes) onto data DREGs, with no spilling (there is
none on the device), and the clear error of how many DREGs a plan needs when they do not fit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from cain.backend.adc_dac import Analogue
from cain.diagnostics import CainError
from cain.model.dreg import FLAGS, MASKED, Load, Word

Item = Word | Load | Analogue


class DigitalAllocationError(CainError):
    """The plan needs more DREGs than the PE has for data; with `proven`, `needed` is what every program
    needs (`cain.backend.digital_bound`), not only the programs Cain built."""

    def __init__(self, message: str, needed: int, proven: bool = False, short: str = ""):
        super().__init__(message)
        self.needed = needed
        self.proven = proven
        self.short = short
        """The proof in a few words (tables)."""


def live_peak(items: Sequence[Item], inputs: Sequence[str], outputs: Sequence[str]) -> int:
    """The most virtual values live at once (inputs until their last read, outputs until the end)."""
    last = _last_uses(items, outputs)
    live = {b for b in inputs if b in last}
    peak = len(live)
    for i, w in enumerate(items):
        new = {d for d in w.dests if d.startswith("%")}
        peak = max(peak, len(live | new))
        live = {b for b in live | new if last.get(b, -1) > i}
    return peak


def move_peak(items: Sequence[Item], inputs: Sequence[str], outputs: Sequence[str]) -> int:
    """The most virtual values live at a `DNEWS0` (its destination included): there the direction flags
    hold the direction, so each of them needs a data DREG (or R12, parked)."""
    last = _last_uses(items, outputs)
    live = {b for b in inputs if b in last}
    peak = 0
    for i, w in enumerate(items):
        new = {d for d in w.dests if d.startswith("%")}
        if w.kind == "DNEWS0":
            peak = max(peak, len(live | new))
        live = {b for b in live | new if last.get(b, -1) > i}
    return peak


def _last_uses(items: Sequence[Item], outputs: Sequence[str]) -> dict[str, int]:
    last: dict[str, int] = {}
    for i, w in enumerate(items):
        for s in w.srcs:
            last[s] = i
    for b in outputs:
        last[b] = len(items)
    return last


def flag_gaps(words: Sequence[Item]) -> list[bool]:
    """For each word, whether the direction flags R1-R4 are free for data there: no `DNEWS0` reads them
    before the next set-up (`CLR(R1, R2, R3, R4)`) rewrites them all."""
    free = [False] * len(words)
    after = True
    for i in range(len(words) - 1, -1, -1):
        w = words[i]
        if w.kind == "DNEWS0":
            after = False
        elif w.kind == "CLR" and set(w.dests) == set(FLAGS.values()):
            after = True
            continue
        elif set(w.dests) & set(FLAGS.values()):
            continue
        free[i] = after
    return free


def allocate(
    items: Sequence[Item],
    inputs: dict[str, str],
    outputs: Sequence[str],
    dregs: Sequence[str],
    too_many: Callable[[int], str],
    flags: bool = False,
    flags_first: bool = False,
    parked: dict[str, str] | None = None,
) -> tuple[list[Item], dict[str, str]]:
    """Items on DREGs (linear scan; an item never writes a register it reads), and the register of every
    virtual value; `too_many(peak)` is the error's message when `peak` values live at once do not fit. With
    `flags`, when no data DREG is free, a temporary whose whole life lies where the direction flags are
    free (`flag_gaps`) lives in one of them; with `flags_first`, whenever one is free, leaving the data
    DREGs to the values that live across moves (more set-ups stay, as the flags are overwritten). `parked`
    values live in the registers it names (outside the scan, as `park` makes them), and a data DREG an item
    writes by name (`SET(R0)`) holds no value across that item."""
    last = _last_uses(items, outputs)
    parked = parked or {}
    written = {
        i: set(item.dests) & set(dregs) for i, item in enumerate(items) if set(item.dests) & set(dregs)
    }
    for b, r in inputs.items():
        if any(r in regs and i <= last.get(b, -1) for i, regs in written.items()):
            raise DigitalAllocationError(f"{r} holds the input bit {b} when a word writes it", len(dregs) + 1)
    spare = list(FLAGS.values()) if flags else []
    gaps = flag_gaps(items) if flags else []
    order = list(dregs) + [r for r in inputs.values() if r not in dregs]
    where = dict(inputs)
    free = [r for r in dregs if r not in inputs.values()]
    free += [r for b, r in inputs.items() if b not in last]
    held: set[str] = set()
    allocated: list[Item] = []
    for i, item in enumerate(items):
        srcs = tuple(where.get(s, s) for s in item.srcs)
        dests = []
        for d in item.dests:
            if not d.startswith("%"):
                dests.append(d)
                continue
            end = last.get(d, i)
            if d in parked:
                where[d] = parked[d]
                dests.append(parked[d])
                continue
            clobbered = {r for k, regs in written.items() if i < k <= end for r in regs}
            usable = sorted((r for r in free if r not in srcs and r not in clobbered), key=order.index)
            if flags and (flags_first or not usable) and all(gaps[i : end + 1]):
                usable = [r for r in spare if r not in held and r not in srcs] + usable
            if not usable:
                peak = live_peak(items, list(inputs), outputs)
                raise DigitalAllocationError(too_many(peak), peak)
            choice = usable[0]
            if choice in spare:
                held.add(choice)
            else:
                free.remove(choice)
            where[d] = choice
            dests.append(choice)
        if isinstance(item, Load):
            allocated.append(Load(dests[0], item.r, item.c, item.rx, item.cx))
        elif isinstance(item, Analogue):
            allocated.append(replace(item, srcs=srcs))
        else:
            allocated.append(Word(item.kind, tuple(dests), srcs))
        for b in {*item.srcs, *item.dests}:
            if b.startswith("%") and last.get(b, -1) <= i and b in where:
                if where[b] in spare:
                    held.discard(where[b])
                elif where[b] not in free and b not in parked:
                    free.append(where[b])
    return allocated, where


Parked = tuple[list[Word], dict[str, str], list[str]]
"""The words with bits parked, each parked value's register, and the outputs (`Parking.result`)."""


class Parking:
    """Words with bits moved out of the scan's DREGs, into R12 (written only where R0 = 1: `SET(R0)` and a
    `MOV`) or FLAG (written by `WHERE`; the kernel then ends with `ALL()`, as analogue words expect FLAG):
    the words, each parked value's register, and the outputs (a parked bit under its new name)."""

    def __init__(self, words: Sequence[Word], outputs: Sequence[str]):
        self.out = list(words)
        self.parked: dict[str, str] = {}
        self.outputs = list(outputs)
        self.moved: set[str] = set()
        self.tail: list[Word] = []
        """The words after `out`: outputs parked in FLAG moved into DREGs, then `ALL()`."""

    def put(self, b: str, at: int, register: str) -> str:
        """Park `b` in `register` before word `at`, every later read of it reading the parked copy; a parked
        output in FLAG is moved into a DREG at the end."""
        masked, mask = next(iter(MASKED.items()))
        name = f"{b}.{register}"
        write = [Word("SET", (mask,)), Word("MOV", (name,), (b,))] if register == masked else []
        write = write or [Word("WHERE", (name,), (b,))]
        out = self.out
        out[at:at] = write
        for i in range(at + len(write), len(out)):
            w = out[i]
            out[i] = Word(w.kind, w.dests, tuple(name if s == b else s for s in w.srcs))
        self.parked[name] = register
        if register == "FLAG" and b in self.outputs:
            self.moved.add(f"{b}.out")
            self.tail.append(Word("MOV", (f"{b}.out",), (name,)))
            name = f"{b}.out"
        self.outputs = [name if o == b else o for o in self.outputs]
        return name

    def first_read(self, b: str) -> int:
        return next((i for i, w in enumerate(self.out) if b in w.srcs), len(self.out))

    def finished_first(self) -> tuple[str, int] | None:
        """The output bit defined first (not parked or moved yet), and the word defining it."""
        defined = {d: i for i, w in enumerate(self.out) for d in w.dests}
        finished = [
            (o, defined[o])
            for o in self.outputs
            if o in defined and o not in self.parked and o not in self.moved
        ]
        return min(finished, key=lambda found: found[1], default=None)

    def result(self) -> Parked:
        flag = [Word("ALL", ("FLAG",))] if "FLAG" in self.parked.values() else []
        return self.out + self.tail + flag, self.parked, self.outputs


def park(words: Sequence[Word], inputs: Sequence[str], outputs: Sequence[str], flag: bool = False) -> Parked:
    """The words with bits parked (`Parking`): in R12, the input bit first read the latest, from the start
    until that read (to the end when it is an output bit too), then an output bit; with `flag`, in FLAG the
    output bit finished first, from then to the end."""
    parking = Parking(words, outputs)
    masked = next(iter(MASKED))
    if flag and (found := parking.finished_first()) is not None:
        parking.put(found[0], found[1] + 1, "FLAG")
    start = 0
    out = parking.out
    late = max((b for b in inputs if parking.first_read(b) < len(out)), key=parking.first_read, default=None)
    if late is not None and any(w.kind == "DNEWS0" for w in out[: parking.first_read(late)]):
        name = parking.put(late, 0, masked)
        if name in parking.outputs:  # R12 holds it to the end (fuzz2_82: another bit parked there overwrote it)
            return parking.result()
        start = max(i for i, w in enumerate(parking.out) if name in w.srcs) + 1
    if (found := parking.finished_first()) is not None:
        b, at = found
        parking.put(b, max(start, at + 1), masked)
    return parking.result()


SPANNING = 4
"""Of the bits live at the most crowded moves, how many (the longest-lived) `spanning_parks` tries parking."""


def crowded_moves(
    words: Sequence[Word], inputs: Sequence[str], outputs: Sequence[str], room: int
) -> list[tuple[list[str], int]]:
    """At each move where more than `room` bits are live (the bit moved in among them): the bits live across
    it, and how many are too many."""
    last = _last_uses(words, outputs)
    live = {b for b in inputs if b in last}
    crowded = []
    for i, w in enumerate(words):
        new = {d for d in w.dests if d.startswith("%")}
        if w.kind == "DNEWS0" and len(live) + len(new) > room:
            crowded.append((sorted(live), len(live) + len(new) - room))
        live = {b for b in live | new if last.get(b, -1) > i}
    return crowded


def parked_from_definition(words: Sequence[Word], outputs: Sequence[str], choice: dict[str, str]) -> Parked:
    """Each bit of `choice` parked in its register from just after the word defining it (an input from the
    start) to its last read."""
    parking = Parking(words, outputs)
    defined = {d: i for i, w in enumerate(words) for d in w.dests}
    for b in sorted(choice, key=lambda b: defined.get(b, -1)):
        at = 0 if b not in defined else 1 + next(i for i, w in enumerate(parking.out) if b in w.dests)
        parking.put(b, at, choice[b])
    return parking.result()


def spanning_parks(
    words: Sequence[Word], inputs: Sequence[str], outputs: Sequence[str], room: int
) -> Iterator[Parked]:
    """Parkings to try when `park`'s do not fit: of the bits live at the moves where more than `room` bits
    are live (those live across the most such moves first), one in R12 or FLAG when one more bit is live
    there, else one in each; each from its definition to its last read."""
    last = _last_uses(words, outputs)
    defined = {d: i for i, w in enumerate(words) for d in w.dests}
    crowded = crowded_moves(words, inputs, outputs, room)
    spans = Counter(b for bits, _ in crowded for b in bits)
    ranked = sorted(spans, key=lambda b: (-spans[b], -(last[b] - defined.get(b, -1)), b))[:SPANNING]
    masked = next(iter(MASKED))
    if max((over for _, over in crowded), default=0) <= 1:
        choices = [{b: register} for register in (masked, "FLAG") for b in ranked]
    else:
        choices = [{b: masked, c: "FLAG"} for b in ranked for c in ranked if b != c]
    for choice in choices:
        yield parked_from_definition(words, outputs, choice)


def sequential_parks(
    words: Sequence[Word], inputs: Sequence[str], outputs: Sequence[str], room: int
) -> Iterator[Parked]:
    """Parkings to try when `spanning_parks`' do not fit: at each move where more than `room` bits are live,
    in order, as many of them parked as are too many, each from its definition to its last read, in R12 or
    FLAG once the bit parked there before is read no more; the bit read the latest first, or the earliest."""
    last = _last_uses(words, outputs)
    defined = {d: i for i, w in enumerate(words) for d in w.dests}
    crowded = crowded_moves(words, inputs, outputs, room)
    masked = next(iter(MASKED))
    for latest in (True, False):
        free = {masked: -1, "FLAG": -1}  # the last read of the bit parked there
        chosen: dict[str, str] = {}
        for bits, over in crowded:
            over -= sum(b in chosen for b in bits)
            while over > 0:
                options = [
                    (b, r) for b in bits if b not in chosen for r in free if free[r] <= defined.get(b, -1)
                ]
                if not options:
                    break
                b, r = max(options, key=lambda o: (last[o[0]] if latest else -last[o[0]], o[1] == masked))
                chosen[b] = r
                free[r] = last[b]
                over -= 1
            if over > 0:
                break
        else:
            yield parked_from_definition(words, outputs, chosen)
