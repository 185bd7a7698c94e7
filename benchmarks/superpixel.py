"""Superpixel mode: Cain-Java's superpixel examples compiled to verified DREG words and pattern loads, and a
fuzz campaign.

    python -m benchmarks.superpixel table --budget 2000        # results in benchmarks/results/superpixel/
    python -m benchmarks.superpixel fuzz --samples 300 --budget 300 --jobs 2

The table compiles every superpixel config of Cain-Java's `examples/` (its tile, banks, bit order and
`"bank:REG"` names) and counts the program's ICWs (kernel words) and pattern loads (host calls between
kernels); each program is verified bit for bit by the compiler and once more here, on other images, by a
check that packs and unpacks the tiles itself and runs the DREG simulator directly. Cain-Java's own counts
(its cost model, the ICWs and pattern loads of its C) come from `benchmarks.superpixel_java`'s recorded
results (benchmarks/results/superpixel-java/) when that module and its results exist (`java_counts`, the
hook), else the columns say `-`.

The fuzz campaign compiles random kernel files (random tile sizes, banks, bit orders, widths, input and
output banks; 1 to 3 kernels of signed integer weights on 1 or 2 channels, sometimes a bias and a ReLU) through `cain.compile`; each outcome is `passed`,
`no fit` (the clear error that the DREG file is too small), `error` (another one-line error), `crash` (a
traceback) or `wrong`. Every case not `passed` or `no fit` is saved under tests/regressions/superpixel/,
which tests/backend/test_superpixel.py compiles.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

import cain
from benchmarks.common import (
    FUZZ_OUTCOMES,
    ROOT,
    fuzz_cases,
    machine_info,
    machine_line,
    markdown_table,
    read_results,
    write_results,
)
from benchmarks.superpixel_java import EXAMPLES
from cain.backend.adc_dac import run_mixed
from cain.backend.dreg_alloc import DigitalAllocationError
from cain.backend.dreg_sim import run_words
from cain.backend.superpixel import SuperpixelProgram
from cain.diagnostics import CainError
from cain.model.dreg import DREGS

OUT = ROOT / "benchmarks" / "results" / "superpixel"
CASES_DIR = ROOT / "tests" / "regressions" / "superpixel"
JAVA_EXAMPLES = ROOT / "examples" / "json" / "superpixel"
"""Copies of Cain-Java's superpixel configs (its examples/ folder at 3dc1981)."""
TARGET = 0.7
"""Cain's ICWs at most this share of Cain-Java's real ICWs: the target of the table."""


JAVA_RESULTS = ROOT / "benchmarks" / "results" / "superpixel-java"


def java_counts(path: Path = JAVA_RESULTS) -> dict[str, dict[str, Any]]:
    """Cain-Java's counts per example, `{example: {"cost", "icws", "pattern_loads", ...}}`, from the results
    `python -m benchmarks.superpixel_java` recorded in `path`; empty when there are none (the hook: the
    table's Java columns then say `-`)."""
    try:
        record = read_results(path)
    except (OSError, ValueError):
        return {}
    runs = record.get("runs", [])
    return {r["example"]: r for r in runs if isinstance(r, dict) and r.get("status") == "ok"}


def pack(values: np.ndarray, program: SuperpixelProgram, bank: int, rng: np.random.Generator) -> np.ndarray:
    """Tile values as one DREG plane (bit k on bank's PE k; random elsewhere), written here apart from the
    compiler's own packing."""
    lay = program.layout
    rows, cols = values.shape[-2:]
    plane = rng.random((*values.shape[:-2], rows * lay.height, cols * lay.width)) < 0.5
    for k, (r, c) in enumerate(lay.banks[bank]):
        for tr in range(rows):
            for tc in range(cols):
                plane[..., tr * lay.height + r, tc * lay.width + c] = (values[..., tr, tc] >> k) & 1
    return plane


def unpack(plane: np.ndarray, program: SuperpixelProgram, bank: int, rows: int, cols: int) -> np.ndarray:
    lay = program.layout
    out = np.zeros((*plane.shape[:-2], rows, cols), dtype=object)
    for k, (r, c) in enumerate(lay.banks[bank]):
        bits = plane[..., r :: lay.height, c :: lay.width].astype(object)
        out += bits * (1 << k)
    return out


def correlation(images: np.ndarray, goal, bits: int) -> np.ndarray:
    """The integer correlation on the tile grid by padding, 0 beyond the edge, modulo 2^bits (Python ints)."""
    pad = max((max(abs(x), abs(y)) for (x, y, _), _ in goal), default=0)
    h, w = images.shape[-2:]
    padded = np.full((*images.shape[:-2], h + 2 * pad, w + 2 * pad), 0, dtype=object)  # Python ints
    padded[..., pad : pad + h, pad : pad + w] = images
    total = np.zeros(images.shape[1:], dtype=object)
    for (x, y, z), count in goal:
        total = total + int(count) * padded[z, ..., pad - y : pad - y + h, pad + x : pad + x + w]
    return total % (1 << bits)


def recheck(program: SuperpixelProgram, seed: int) -> bool:
    """The program's outputs equal the integer correlation on fresh random tile images, away from the edge."""
    if program.superpixel.adc or program.superpixel.dac:
        return recheck_converted(program, seed)
    rng = np.random.default_rng(seed + 101)
    bits = program.superpixel.bits
    size = 7 + 2 * program.margin
    draw = random.Random(seed)
    shape = (len(program.inputs), 2, size, size)
    images = np.array([draw.getrandbits(bits) for _ in range(int(np.prod(shape)))], dtype=object).reshape(
        shape
    )
    images[:, 0] = (1 << bits) - 1
    state = {
        r: rng.random((2, size * program.layout.height, size * program.layout.width)) < 0.5 for r in DREGS
    }
    for (_, reg, bank), image in zip(program.inputs, images, strict=True):
        state[reg] = pack(image.astype(object), program, bank, rng)
    state = run_words(program.items, state, DREGS, rng)
    m = program.margin
    sp = program.superpixel
    for k, ((_, reg, bank), goal) in enumerate(zip(program.outputs, program.goals, strict=True)):
        got = unpack(state[reg], program, bank, size, size)
        want = (correlation(images, goal, bits) + (sp.bias[k] if sp.bias else 0)) % (1 << bits)
        if sp.relu and sp.relu[k]:
            want = np.where(want >= 1 << (bits - 1), 0, want)
        if not (got[..., m : size - m, m : size - m] == want[..., m : size - m, m : size - m]).all():
            return False
    return True


def recheck_converted(program: SuperpixelProgram, seed: int) -> bool:
    """With an ADC and DAC: on random analogue tile values (a level in the ADC's range plus a fraction), the
    DAC's register on every PE is the integer correlation of the ADC's offset-binary levels, bits unit to
    unit + n - 1 read as two's complement (and the DREG output is the correlation itself)."""
    sp, lay = program.superpixel, program.layout
    assert sp.adc is not None and sp.dac is not None, "the table's converted configs have both"
    rng, size = np.random.default_rng(seed + 202), 7 + 2 * program.margin
    half = 1 << (sp.adc.bits - 1)
    levels = rng.integers(-half, half, size=(1, 2, size, size))
    tiles = levels[0] + rng.uniform(0.125, 0.875, levels.shape[1:])
    shape = (2, size * lay.height, size * lay.width)
    state = {r: rng.random(shape) < 0.5 for r in DREGS}
    analogue = {r: rng.uniform(-128, 128, shape) for r in ("A", "B", "C", "D", "E", "F", "NEWS")}
    analogue[sp.adc.register] = np.repeat(np.repeat(tiles, lay.height, -2), lay.width, -1)
    state = run_mixed(program.items, state, analogue, rng)
    (_, reg, bank), goal = program.outputs[0], program.goals[0]
    want = correlation(((levels + half) << sp.adc.unit).astype(object), goal, sp.bits)
    window = (want >> sp.dac.unit) % (1 << sp.dac.bits)
    signed = np.where(window >= 1 << (sp.dac.bits - 1), window - (1 << sp.dac.bits), window).astype(float)
    pes = np.repeat(np.repeat(signed, lay.height, -2), lay.width, -1)
    m = program.margin
    inside = (..., slice(m, size - m), slice(m, size - m))
    dreg_ok = (unpack(state[reg], program, bank, size, size)[inside] == want[inside]).all()
    m_h, m_w = m * lay.height, m * lay.width
    dac = analogue[sp.dac.register][..., m_h : shape[1] - m_h, m_w : shape[2] - m_w]
    return bool(dreg_ok and (dac == pes[..., m_h : shape[1] - m_h, m_w : shape[2] - m_w]).all())


def table(args: argparse.Namespace) -> int:
    java = java_counts(Path(args.java_results))
    rows, records = [], []
    for name in EXAMPLES:
        path = Path(args.examples) / f"{name}.json"
        start = time.perf_counter()
        result = cain.compile(str(path), budget=args.budget, time=args.time, seed=args.seed)
        program = result.superpixel
        assert program is not None
        lay = program.layout
        j = java.get(name, {})
        record = {
            "example": name,
            "tile": f"{lay.width}x{lay.height}",
            "banks x bits": f"{len(lay.banks)}x{lay.bits}",
            "icws": program.icws,
            "pattern_loads": program.loads,
            "kernels": program.kernels,
            "macros": program.macros,
            "dregs": program.dregs,
            "strategy": list(program.strategy),
            "seconds": round(time.perf_counter() - start, 2),
            "verified": recheck(program, args.seed),
            "java_cost": j.get("cost"),
            "java_icws": j.get("icws"),
            "java_loads": j.get("pattern_loads"),
            "java_kernels": j.get("kernels"),
            "adc_dac_analogue_calls": list(program.analogue) if program.superpixel.adc else None,
        }
        ratio = program.icws / j["icws"] if j.get("icws") else None
        record["share_of_java_icws"] = None if ratio is None else round(ratio, 3)
        records.append(record)
        rows.append(
            [
                name,
                record["tile"],
                record["banks x bits"],
                program.icws,
                program.loads,
                program.kernels,
                _dash(j.get("cost")),
                _dash(j.get("icws")),
                _dash(j.get("pattern_loads")),
                _dash(j.get("kernels")),
                "-" if ratio is None else f"{ratio:.0%}",
                record["seconds"],
                "yes" if record["verified"] else "NO",
            ]
        )
        print(rows[-1], file=sys.stderr)
    headers = [
        "example",
        "tile",
        "banks x bits",
        "ICWs",
        "pattern loads",
        "kernels",
        "Java cost model",
        "Java ICWs",
        "Java loads",
        "Java kernels",
        "Cain / Java ICWs",
        "compile s",
        "verified",
    ]
    body = markdown_table(headers, rows)
    for r in records:
        if r["adc_dac_analogue_calls"]:
            calls, host = r["adc_dac_analogue_calls"]
            body += (
                f"\n{r['example']}: both ICW counts include the DREG words of the config's ADC and DAC (like for "
                f"like); neither counts analogue calls (Cain's: {calls} in kernels, {host} host scamp5_in calls, "
                "not in its pattern loads either). Cain's is verified with them in an ideal analogue model.\n"
            )
    _write(args, "table", body, records)
    met = all(r["share_of_java_icws"] is None or r["share_of_java_icws"] <= TARGET for r in records)
    return 0 if all(r["verified"] for r in records) and met else 1


def _dash(value: Any) -> Any:
    return "-" if value is None else value


def kernel_file(rng: random.Random, index: int) -> str:
    """A random superpixel filter: tile, banks, order, bits and banks of inputs and outputs, and 1 or 2
    kernels of 2x2 or 3x3 signed integer weights."""
    width, height = rng.choice((1, 2, 4)), rng.choice((1, 2, 4))
    lines = [f"filter fuzz{index}", "option mode = superpixel", f"option tile = {width} {height}"]
    banks = rng.choice([b for b in (1, 2, 4) if height % b == 0])
    strip = width * height // banks
    if width == height and banks == 1 and width > 1 and rng.random() < 0.3:
        lines.append("option order = hilbert")
    elif banks > 1:
        lines.append(f"option banks = {banks}")
    bits = rng.randint(max(1, strip // 2), strip) if rng.random() < 0.5 else strip
    if bits != strip:
        lines.append(f"option bits = {bits}")
    kernels = rng.choice((1, 1, 2, 2, 3))
    channels = 2 if rng.random() < 0.2 else 1
    if channels == 2:
        lines.append("input P -> E, Q -> F")
    if banks > 1:
        lines.append(f"option input_banks = {' '.join(str(rng.randrange(banks)) for _ in range(channels))}")
        lines.append(f"option output_banks = {' '.join(str(rng.randrange(banks)) for _ in range(kernels))}")
    if rng.random() < 0.2:
        lines.append(f"option bias = {' '.join(str(rng.randint(-9, 9)) for _ in range(kernels))}")
    if rng.random() < 0.2:
        lines.append("option activation = relu")
    for k in range(kernels):
        matrices = [_matrix(rng) for _ in range(channels)]
        weights = (
            matrices[0]
            if channels == 1
            else "{ " + ", ".join(f"{c}: {m}" for c, m in zip("PQ", matrices, strict=True)) + " }"
        )
        lines.append(f"output K{k} -> {'ABC'[k]} = {weights}")
    return "\n".join(lines) + "\n"


def _matrix(rng: random.Random) -> str:
    """A random matrix of 1x1 to 3x3 (rarely 5x5) signed integer weights, not all zero."""
    size = rng.choice((1, 2, 3, 3, 3, 5)) if rng.random() < 0.2 else rng.choice((2, 3))
    while True:
        weights = [[rng.choice((-2, -1, 0, 0, 1, 1, 2)) for _ in range(size)] for _ in range(size)]
        if any(any(row) for row in weights):
            break
    return "[" + "; ".join(" ".join(map(str, row)) for row in weights) + "]"


def fuzz_case(
    case: tuple[int, str, int | None, float | None, int],
) -> tuple[str, str, int | None, int | None]:
    """Compile one random kernel file: (outcome, the file with its error or traceback, ICWs, loads)."""
    i, text, budget, seconds, seed = case
    try:
        result = cain.compile(text, budget=budget, time=seconds, seed=seed)
        program = result.superpixel
        assert program is not None
        return ("passed" if recheck(program, i) else "wrong"), text, program.icws, program.loads
    except DigitalAllocationError as e:
        return "no fit", text + f"// {e}\n", None, None
    except CainError as e:
        return "error", text + f"// {e}\n", None, None
    except Exception:  # noqa: BLE001 (a crash is an outcome to count and keep)
        lines = traceback.format_exc().splitlines()
        return "crash", text + "".join(f"// {line}\n" for line in lines), None, None


def fuzz(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    cases = [(i, kernel_file(rng, i), args.budget, args.time, args.seed) for i in range(args.samples)]
    outcomes, counts, each = fuzz_cases(fuzz_case, cases, args.jobs, CASES_DIR, args.seed)
    icws, loads = [cost for cost, _ in counts], [load for _, load in counts]
    body = markdown_table(["outcome", "filters"], [[o, outcomes[o]] for o in FUZZ_OUTCOMES])
    if icws:
        body += (
            f"\nICWs of the passed programs: median {int(np.median(icws))}, max {max(icws)}; pattern loads: "
            f"median {int(np.median(loads))}, max {max(loads)}\n"
        )
    _write(args, "fuzz", body, {"outcomes": dict(outcomes), "icws": icws, "loads": loads, "each": each})
    return 0 if not (outcomes["crash"] or outcomes["wrong"] or outcomes["error"]) else 1


def _write(args: argparse.Namespace, what: str, body: str, data: object) -> None:
    out = Path(args.out) / what
    out.mkdir(parents=True, exist_ok=True)
    command = "python -m benchmarks.superpixel " + " ".join(sys.argv[1:])
    record = {
        "command": command,
        "settings": vars(args) | {"out": str(args.out)},
        "machine": machine_info(),
        "results": data,
    }
    write_results(out, record)
    machine = machine_line(record["machine"])  # type: ignore[arg-type]
    (out / "summary.md").write_text(
        f"# Superpixel mode: {what}\n\n`{command}`\n\nMachine: {machine}\n\n{body}"
    )
    print(body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.superpixel", description=__doc__.splitlines()[0]
    )
    parser.add_argument("what", choices=("table", "fuzz"))
    parser.add_argument("--budget", type=int, help="search nodes per filter, deterministic")
    parser.add_argument("--time", type=float, help="seconds per filter (default: 10 without --budget)")
    parser.add_argument("--examples", default=str(JAVA_EXAMPLES), help="Cain-Java's examples folder")
    parser.add_argument(
        "--java-results", default=str(JAVA_RESULTS), help="where benchmarks.superpixel_java wrote its results"
    )
    parser.add_argument("--jobs", type=int, default=1, help="fuzz: filters compiled in parallel (default 1)")
    parser.add_argument("--samples", type=int, default=300, help="fuzz: filters (default 300)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    return table(args) if args.what == "table" else fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
