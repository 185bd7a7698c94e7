"""Register allocation on the DREG file, for the digital mode's words and the superpixel mode's items alike:
a linear scan of virtual values (`%n`: bits, or whole planes) onto data DREGs, with no spilling (there is
none on the device), and the clear error of how many DREGs a plan needs when they do not fit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from cain.backend.adc_dac import Analogue
from cain.diagnostics import CainError
from cain.model.dreg import FLAGS, Load, Word

Item = Word | Load | Analogue


class DigitalAllocationError(CainError):
    """The plan needs more DREGs than the PE has for data; with `proven`, `needed` is what every program
    needs (`cain.backend.digital_bound`), not only the programs Cain built."""

    def __init__(self, message: str, needed: int, proven: bool = False):
        super().__init__(message)
        self.needed = needed
        self.proven = proven


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
) -> tuple[list[Item], dict[str, str]]:
    """Items on DREGs (linear scan; an item never writes a register it reads), and the register of every
    virtual value; `too_many(peak)` is the error's message when `peak` values live at once do not fit. With
    `flags`, when no data DREG is free, a temporary whose whole life lies where the direction flags are
    free (`flag_gaps`) lives in one of them; with `flags_first`, whenever one is free, leaving the data
    DREGs to the values that live across moves (more set-ups stay, as the flags are overwritten)."""
    last = _last_uses(items, outputs)
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
            usable = sorted((r for r in free if r not in srcs), key=order.index)
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
                elif where[b] not in free:
                    free.append(where[b])
    return allocated, where
