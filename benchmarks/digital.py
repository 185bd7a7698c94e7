"""The digital (DREG) plane: a table of filters compiled to verified DREG words, and a fuzz campaign.

    python -m benchmarks.digital table --budget 6000      # results in benchmarks/results/digital/
    python -m benchmarks.digital fuzz --samples 500 --jobs 2   # at the default budget (10 s a filter)

The table compiles each filter for the device's DREG file (R5-R11 and R0 for data, the direction flags
R1-R4 between moves, R12 for parked bits); a filter that does not fit is reported with the DREGs Cain's
programs need (or, when the outputs' bits alone exceed the PE's 13 DREGs or the outputs take more values
together than a PE's bits after its last move tell apart, as proven not to fit), and compiled again for a
hypothetical file of 64 data DREGs so its ICWs are known. `bound` is the DREGs every program needs at its
end (`cain.backend.digital_bound`) of the most any program may use. Every program is verified bit for bit in
the DREG simulator before it is counted, and once more here on other images.

The fuzz campaign compiles random kernel files (signed integer weights, 1 to 3 input bits, exact or fixed
widths) through `cain.compile`; each outcome is `passed`, `no fit` (the clear error that the DREG file is
too small; such a filter is compiled again for the hypothetical file, on `--wide-budget` nodes, and checked),
`error` (another one-line error), `crash` (a traceback) or `wrong`. Every case not `passed` or `no fit` is
saved under tests/regressions/digital/, which tests/backend/test_digital.py compiles (each must then give a
verified program, or say it does not fit).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

import cain
from benchmarks.common import FUZZ_OUTCOMES, ROOT, fuzz_cases, machine_info, markdown_table
from cain.backend.digital import DigitalProgram
from cain.backend.digital_bound import filter_bound, proven_no_fit
from cain.backend.dreg_alloc import DigitalAllocationError
from cain.diagnostics import CainError
from cain.frontend.java_json import parse_filter as parse_json
from cain.frontend.kernel import parse_filter
from cain.model.dreg import DATA_DREGS
from cain.search.digital import compile_digital

OUT = ROOT / "benchmarks" / "results" / "digital"
CASES_DIR = ROOT / "tests" / "regressions" / "digital"
HYPOTHETICAL = DATA_DREGS + tuple(f"R{i}" for i in range(13, 70))

BOX = "[1 1 1; 1 1 1; 1 1 1]"
GAUSS = "[1 2 1; 2 4 2; 1 2 1]"


def _ternary_layer(seed: int = 7) -> str:
    rng = random.Random(seed)
    rows = []
    for k in range(4):
        weights = "; ".join(" ".join(str(rng.choice((-1, 0, 1))) for _ in range(3)) for _ in range(3))
        rows.append(f"output T{k} -> {'ABCD'[k]} = [{weights}]")
    return "\n".join(rows)


FILTERS: dict[str, str] = {
    "neighbour count, 1 bit": "option input_bits = 1\noutput N -> A = [1 1 1; 1 0 1; 1 1 1]",
    "3x3 box, 4 bits": f"option input_bits = 4\noutput B -> A = {BOX}",
    "3x3 box, 8 bits": f"option input_bits = 8\noutput B -> A = {BOX}",
    "3x3 Gaussian, 4 bits": f"option input_bits = 4\noutput G -> A = {GAUSS}",
    "3x3 Gaussian, 8 bits": f"option input_bits = 8\noutput G -> A = {GAUSS}",
    "Sobel pair, 8 bits": (
        "option input_bits = 8\noutput X -> A = [1 0 -1; 2 0 -2; 1 0 -1]\n"
        "output Y -> B = [1 2 1; 0 0 0; -1 -2 -1]"
    ),
    "ternary layer of 4 kernels, 1 bit": "option input_bits = 1\n" + _ternary_layer(),
}


def correlation(images: np.ndarray, goal) -> np.ndarray:
    """The integer correlation, by padding (independent of the simulators' shifts): 0 beyond the edge."""
    pad = max((max(abs(x), abs(y)) for (x, y, _), _ in goal), default=0)
    padded = np.pad(images, [(0, 0)] * (images.ndim - 2) + [(pad, pad), (pad, pad)])
    h, w = images.shape[-2:]
    total = np.zeros(images.shape[1:], dtype=np.int64)
    for (x, y, z), count in goal:
        total += count * padded[z, ..., pad - y : pad - y + h, pad + x : pad + x + w]
    return total


def recheck(program: DigitalProgram, seed: int) -> bool:
    """The program's outputs equal the integer correlation on fresh random images, away from the edge."""
    rng = np.random.default_rng(seed + 101)
    size = 10 + 2 * program.margin
    widths = [program.encoding.input_width(z) for z in range(len(program.inputs))]
    images = np.stack([rng.integers(0, 1 << w, size=(3, size, size)) for w in widths])
    m = program.margin
    for got, goal in zip(program.run(images, seed=seed + 7), program.goals, strict=True):
        want = correlation(images, goal)
        if program.encoding.bits is not None:
            want %= 1 << program.encoding.bits
        if not (got[..., m : size - m, m : size - m] == want[..., m : size - m, m : size - m]).all():
            return False
    return True


def table(args: argparse.Namespace) -> int:
    rows, records = [], []
    sources = {name: parse_filter(f"option mode = digital\n{text}", name) for name, text in FILTERS.items()}
    sources["Cain-Java digital box (2 bits, mod 4)"] = parse_json(
        (ROOT / "examples" / "json" / "digitalBox.json").read_text(), "digitalBox.json"
    )
    for name, filt in sources.items():
        assert filt.encoding is not None
        start = time.perf_counter()
        record: dict[str, Any] = {"filter": name}
        try:
            program = compile_digital(filt, filt.encoding, args.budget, args.seed, args.time)
            record.update(fits=True, icws=program.icws, dregs=len(program.dregs), registers=program.dregs)
        except DigitalAllocationError as e:
            record.update(fits=False, needs=e.needed, proven=e.proven, proof=e.short)
            wide = replace(filt.encoding, dregs=HYPOTHETICAL)
            program = compile_digital(filt, wide, args.budget, args.seed, args.time)
            record.update(icws=program.icws, dregs=len(program.dregs))
        record["seconds"] = round(time.perf_counter() - start, 2)
        record["verified"] = recheck(program, args.seed)
        record["outputs"] = [f"{k}: {' '.join(r)}" for k, r, _ in program.outputs]
        records.append(record)
        bound = filter_bound(filt, filt.encoding)
        record.update(bound=bound.needed, capacity=len(bound.capacity))
        rows.append(
            [
                name,
                record["icws"],
                record["dregs"],
                _fits(record),
                f"{bound.needed} of {len(bound.capacity)}",
                record["seconds"],
                "yes" if record["verified"] else "NO",
            ]
        )
        print(rows[-1], file=sys.stderr)
    headers = ["filter", "ICWs", "DREGs", "fits the device", "bound", "compile s", "verified"]
    body = markdown_table(headers, rows)
    _write(args, "table", body, records)
    return 0 if all(r["verified"] for r in records) else 1


def _fits(record: dict[str, Any]) -> str:
    if record["fits"]:
        return "yes"
    if record["proven"]:
        return f"no program fits: {record['proof']} (a proof)"
    return f"no: Cain's need {record['needs']} live at once; open"


def kernel_file(rng: random.Random, index: int) -> str:
    """A random digital filter as a kernel file: 1 or 2 kernels of 2x2 or 3x3 signed integer weights."""
    lines = [f"filter fuzz{index}", "option mode = digital", f"option input_bits = {rng.randint(1, 3)}"]
    if rng.random() < 0.3:
        lines.append(f"option bits = {rng.randint(2, 6)}")
    for k in range(rng.randint(1, 2)):
        size = rng.choice((2, 3))
        while True:
            weights = [[rng.choice((-2, -1, 0, 0, 1, 1, 2)) for _ in range(size)] for _ in range(size)]
            if any(any(row) for row in weights):
                break
        matrix = "; ".join(" ".join(map(str, row)) for row in weights)
        lines.append(f"output K{k} -> {'AB'[k]} = [{matrix}]")
    return "\n".join(lines) + "\n"


def fuzz_case(case: tuple[int, str, int | None, float | None, int, int]) -> tuple[str, str, int | None]:
    """Compile one random kernel file: (outcome, the file with its error or traceback, ICWs when it passed).
    A filter that does not fit is compiled again for the hypothetical DREG file on `wide` nodes, so that
    its lowering is checked too."""
    i, text, budget, seconds, wide, seed = case
    try:
        result = cain.compile(text, budget=budget, time=seconds, seed=seed)
        assert result.digital is not None
        return ("passed" if recheck(result.digital, i) else "wrong"), text, result.icws
    except DigitalAllocationError:
        filt = cain.read_filters(text)[0]
        assert filt.encoding is not None
        try:
            program = compile_digital(filt, replace(filt.encoding, dregs=HYPOTHETICAL), wide, seed)
            return ("no fit" if recheck(program, i) else "wrong"), text, None
        except CainError as e:
            return "error", text + f"// hypothetical DREG file: {e}\n", None
    except CainError as e:
        return "error", text + f"// {e}\n", None
    except Exception:  # noqa: BLE001 (a crash is an outcome to count and keep)
        lines = traceback.format_exc().splitlines()
        return "crash", text + "".join(f"// {line}\n" for line in lines), None


def proven_count(texts: list[str]) -> int:
    """How many of the kernel files provably fit no program on the device's DREG file (`proven_no_fit`):
    the `no fit` outcomes that are not a lack of Cain's."""
    count = 0
    for text in texts:
        filt = cain.read_filters(text)[0]
        assert filt.encoding is not None
        count += proven_no_fit(filt, filt.encoding) is not None
    return count


def fuzz(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    cases = [
        (i, kernel_file(rng, i), args.budget, args.time, args.wide_budget, args.seed)
        for i in range(args.samples)
    ]
    outcomes, counts, each = fuzz_cases(fuzz_case, cases, args.jobs, CASES_DIR, args.seed)
    icws = [cost for (cost,) in counts]
    body = markdown_table(["outcome", "filters"], [[o, outcomes[o]] for o in FUZZ_OUTCOMES])
    if icws:
        body += f"\nICWs of the passed programs: median {int(np.median(icws))}, max {max(icws)}\n"
    proven = proven_count([text for _, text, *_ in cases])
    body += f"\n`no fit` with a proof that no program fits (`cain.backend.digital_bound`): {proven}\n"
    _write(args, "fuzz", body, {"outcomes": dict(outcomes), "icws": icws, "proven": proven, "each": each})
    return 0 if not (outcomes["crash"] or outcomes["wrong"]) else 1


def _write(args: argparse.Namespace, what: str, body: str, data: object) -> None:
    out = Path(args.out) / what
    out.mkdir(parents=True, exist_ok=True)
    command = "python -m benchmarks.digital " + " ".join(sys.argv[1:])
    record = {
        "command": command,
        "settings": vars(args) | {"out": str(args.out)},
        "machine": machine_info(),
        "results": data,
    }
    (out / "results.json").write_text(json.dumps(record, indent=1, default=str) + "\n")
    (out / "summary.md").write_text(f"# Digital plane: {what}\n\n`{command}`\n\n{body}")
    print(body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.digital", description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("table", "fuzz"))
    parser.add_argument(
        "--budget", type=int, help="search nodes per plan, deterministic (default: the time budget)"
    )
    parser.add_argument("--time", type=float, help="seconds per filter (default: 10 without --budget)")
    parser.add_argument(
        "--wide-budget",
        type=int,
        default=300,
        help="fuzz: nodes for the hypothetical DREG file's check of a filter that does not fit",
    )
    parser.add_argument("--jobs", type=int, default=1, help="fuzz: filters compiled in parallel (default 1)")
    parser.add_argument("--samples", type=int, default=500, help="fuzz: filters (default 500)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    return table(args) if args.what == "table" else fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
