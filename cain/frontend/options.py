"""The options a filter may set, their defaults and their checks: shared by both kernel-file readers and the
command line, so a value means the same wherever it is given."""

from __future__ import annotations

import re
from dataclasses import replace
from fractions import Fraction

from cain.model.approx import format_fraction
from cain.model.dreg import DATA_DREGS, DREGS, FLAGS, Encoding
from cain.model.isa import DEFAULT_REGISTERS, INSTRUCTION_SETS, NEIGHBOUR_NEWS, NEWS
from cain.model.superpixel import ORDERS, Converter, LayoutError, Superpixel, hilbert, snake

DEFAULT_MAX_DEPTH = 8
DEFAULT_MAX_ERROR = Fraction(0)
DEFAULT_INSTRUCTION_SET = "all"
DEFAULT_INPUT = "A"
"""Without an `input` statement, one channel named `A` arrives in register `A`."""

OPTIONS: dict[str, str] = {
    "max_depth": "largest approximation depth d (weights become multiples of 1/2^d), an integer >= 0",
    "max_error": "largest total absolute approximation error over all kernels, a number >= 0",
    "registers": "the register file, e.g. A B C D E F",
    "instructions": f"the instruction set: {' | '.join(INSTRUCTION_SETS)}",
    "mode": "the PE plane to compute on: analogue | digital | superpixel",
    "bits": "digital: the width of the outputs; every value wraps modulo 2^bits (default: exact widths); "
    "superpixel: the bits of each bank (default: all its PEs)",
    "input_bits": "digital: the width of each input channel (one value for all, or one per channel)",
    "dregs": f"digital: the DREGs free for data (default {' '.join(DATA_DREGS)})",
    "tile": "superpixel: the tile's width and height in PEs, powers of 2 (default 4 4)",
    "banks": "superpixel: how many values a tile holds, as strips of rows (default 1)",
    "order": f"superpixel: the bit order in each bank: {' | '.join(ORDERS)} (default snake)",
    "input_banks": "superpixel: the bank each input arrives in (one for all, or one per channel; default 0)",
    "output_banks": "superpixel: the bank each output ends in (one for all, or one per kernel; default 0)",
    "bias": "superpixel: a number added to each output after its kernel (one for all, or one per kernel)",
    "activation": "superpixel: relu (negative outputs become 0) or none (default)",
    "adc": "superpixel: convert the input from an analogue register first: `REG [BITS [UNIT]]` (BITS 1-8, "
    "default 8; its LSB is bit UNIT of the bank, default 0)",
    "dac": "superpixel: convert the output to an analogue register last: `REG [BITS [UNIT]]` (bits UNIT "
    "to UNIT+BITS-1 as a two's complement number)",
    "analogue_scratch": "superpixel: the analogue register the ADC / DAC constants use (default: the last "
    "of A-F neither names)",
}
"""The options a kernel file may set, with what each expects."""

OVERRIDE_KEYS = {
    "max_depth": "max_depth",
    "max_error": "max_error",
    "registers": "registers",
    "instruction_set": "instructions",
}
"""Override keys (as `overrides_from_args` returns them) -> the option they replace."""

RESERVED_REGISTERS = frozenset({NEWS, *NEIGHBOUR_NEWS.values()})

MAX_EXPONENT = 64
"""Largest exponent (`2^-64`, `1e64`) a number may have: weights are compiled to multiples of 1/2^d."""
"""The largest exponent a number in a kernel file may carry."""


def n_entries(n: int) -> str:
    """`1 entry`, `3 entries`: a count for error messages."""
    return f"{n} entry" if n == 1 else f"{n} entries"


def check_max_depth(value: object) -> int:
    """A depth limit: an integer >= 0 (raises ValueError with what is wrong)."""
    if isinstance(value, Fraction) and value.denominator == 1:
        value = int(value)
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"max_depth must be an integer >= 0, not '{value}'")
    if value > 30:
        raise ValueError(f"max_depth {value} is too large (at most 30: goals grow as 2^d)")
    return value


def check_max_error(value: object) -> Fraction:
    """An error bound: a number >= 0, given as int, float, Fraction or text like `1/64` or `0.01`."""
    try:
        if isinstance(value, str):
            bound = Fraction(value.strip())
        elif isinstance(value, int | float | Fraction):
            bound = Fraction(value)
        else:
            raise TypeError(value)
    except (ValueError, TypeError, ZeroDivisionError):
        raise ValueError(f"max_error must be a number >= 0 (e.g. 0, 0.01 or 1/64), not '{value}'") from None
    if bound < 0:
        raise ValueError(f"max_error must be at least 0, not {format_fraction(bound)}")
    return bound


def check_registers(value: object) -> tuple[str, ...]:
    """A register file: distinct register names, given as a sequence or as `A,B,C` text."""
    items = re.split(r"[\s,]+", value.strip()) if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise ValueError(f"the register file must be a list of names, not {value!r}")  # noqa: TRY004
    names: list[str] = []
    for name in items:
        if not name:
            continue
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"'{name}' is not a register name (letters, digits and _)")
        if name in RESERVED_REGISTERS:
            raise ValueError(
                f"{name} is reserved (NEWS is every macro's scratch register, XN XE XS XW are the neighbours' "
                "NEWS); it cannot be in the register file"
            )
        if name in names:
            raise ValueError(f"register {name} is listed twice in the register file")
        names.append(name)
    if not names:
        raise ValueError("the register file is empty; name at least one register, e.g. A B C D E F")
    return tuple(names)


def check_instruction_set(value: object) -> str:
    """An instruction set name from `cain.model.isa.INSTRUCTION_SETS` (raises ValueError naming the choices)."""
    if value not in INSTRUCTION_SETS:
        raise ValueError(f"unknown instruction set '{value}' (choose from {', '.join(INSTRUCTION_SETS)})")
    return str(value)


MODES = ("analogue", "digital", "superpixel")
SUPERPIXEL_OPTIONS = (
    "tile",
    "banks",
    "order",
    "input_banks",
    "output_banks",
    "bias",
    "activation",
    "adc",
    "dac",
    "analogue_scratch",
)
DIGITAL_OPTIONS = ("bits", "input_bits", "dregs")
DEFAULT_INPUT_BITS = 1
"""Without `input_bits` (nor `bits`), digital inputs are binary images."""


def check_mode(value: object) -> str:
    if value not in MODES:
        raise ValueError(f"unknown mode '{value}' (choose from {', '.join(MODES)})")
    return str(value)


def _width(value: object, what: str, most: int) -> int:
    if isinstance(value, Fraction) and value.denominator == 1:
        value = int(value)
    if isinstance(value, str) and re.fullmatch(r"\d+", value.strip()):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
        raise ValueError(f"{what} must be an integer from 1 to {most}, not '{value}'")
    return value


def check_bits(value: object) -> int:
    """A fixed value width: 1 to 32 bits."""
    return _width(value, "bits", 32)


def check_input_bits(value: object) -> tuple[int, ...]:
    """Input widths: one integer from 1 to 16, or one per channel."""
    items = value if isinstance(value, list | tuple) else [value]
    return tuple(_width(v, "input_bits", 16) for v in items)


def check_dregs(value: object) -> tuple[str, ...]:
    """DREGs free for data: distinct names among R0 and R5-R12 (R1-R4 are the direction flags)."""
    items = re.split(r"[\s,]+", value.strip()) if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        raise ValueError(f"dregs must be a list of DREG names, e.g. {' '.join(DATA_DREGS)}, not {value!r}")
    allowed = [r for r in DREGS if r not in FLAGS.values()]
    for name in items:
        if name not in allowed:
            raise ValueError(
                f"'{name}' cannot hold data (choose from {' '.join(allowed)}; R1-R4 are the direction flags)"
            )
    if len(set(items)) != len(items):
        raise ValueError("a DREG is listed twice in dregs")
    return tuple(items)


CHECKS = {
    "max_depth": check_max_depth,
    "max_error": check_max_error,
    "registers": check_registers,
    "instructions": check_instruction_set,
    "mode": check_mode,
    "bits": check_bits,
    "input_bits": check_input_bits,
    "dregs": check_dregs,
    "tile": lambda v: check_tile(v),
    "banks": lambda v: _width(v, "banks", 64),
    "order": lambda v: check_order(v),
    "input_banks": lambda v: check_bank_list(v, "input_banks"),
    "output_banks": lambda v: check_bank_list(v, "output_banks"),
    "bias": lambda v: check_bias(v),
    "activation": lambda v: check_activation(v),
    "adc": lambda v: check_converter(v, "adc"),
    "dac": lambda v: check_converter(v, "dac"),
    "analogue_scratch": lambda v: check_converter(v, "analogue_scratch")[0],
}
"""Option (as a kernel file names it) -> the function that checks and converts its value."""


def digital_encoding(options: dict[str, object], channels: int, error=ValueError) -> Encoding | None:
    """The digital encoding the options ask for (None for the analogue plane); `error(message)` builds the
    exception for options that do not fit together."""
    if options.get("mode", "analogue") != "digital":
        allowed = ("bits",) if options.get("mode") == "superpixel" else ()
        given = [k for k in DIGITAL_OPTIONS if k in options and k not in allowed]
        if given:
            raise error(f"option {given[0]} is for the digital plane: add `option mode = digital`")
        return None
    bits = options.get("bits")
    widths = options.get("input_bits", (bits or DEFAULT_INPUT_BITS,))
    assert isinstance(widths, tuple)
    if len(widths) == 1:
        widths = widths * channels
    if len(widths) != channels:
        raise error(f"input_bits gives {n_entries(len(widths))} for {channels} input channels")
    return Encoding(tuple(widths), bits, options.get("dregs", DATA_DREGS))  # type: ignore[arg-type]


def check_tile(value: object) -> tuple[int, int]:
    """A tile size: `W H`, or `N` for a square, powers of 2 from 1 to 64."""
    items = value if isinstance(value, list | tuple) else [value]
    sizes = [_width(v, "tile", 64) for v in items]
    if len(sizes) not in (1, 2) or any(n & (n - 1) for n in sizes):
        given = " ".join(str(v) for v in items)
        raise ValueError(f"tile must be a width and a height, powers of 2 from 1 to 64, not '{given}'")
    return (sizes[0], sizes[-1])


def check_order(value: object) -> str:
    if value not in ORDERS:
        raise ValueError(f"unknown bit order '{value}' (choose from {', '.join(ORDERS)})")
    return str(value)


def check_bank_list(value: object, what: str) -> tuple[int, ...]:
    """Bank numbers: one for all, or one per channel or kernel."""
    items = value if isinstance(value, list | tuple) else [value]
    out = []
    for v in items:
        if isinstance(v, Fraction | str) and re.fullmatch(r"\d+", str(v).strip()):
            v = int(str(v))
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 64:
            raise ValueError(f"{what} must be bank numbers from 0 to 63, not '{v}'")
        out.append(v)
    return tuple(out)


def check_bias(value: object) -> tuple[Fraction, ...]:
    """Biases: numbers (one for all kernels, or one per kernel)."""
    items = value if isinstance(value, list | tuple) else [value]
    out = []
    for v in items:
        try:
            out.append(Fraction(str(v).strip()) if isinstance(v, str) else Fraction(v))  # type: ignore[arg-type]
        except (ValueError, TypeError, ZeroDivisionError):
            raise ValueError(f"bias must be numbers, not '{v}'") from None
    return tuple(out)


def check_activation(value: object) -> str:
    if value not in ("relu", "none"):
        raise ValueError(f"unknown activation '{value}' (choose from relu, none)")
    return str(value)


def check_converter(value: object, what: str) -> tuple[str, int, int]:
    """An ADC or DAC: `REG [BITS [UNIT]]`, an analogue register A-F, 1 to 8 bits, the LSB's bit (0-63)."""
    items = [str(v).strip() for v in (value if isinstance(value, list | tuple) else [value])]
    register = items[0]
    numbers = [*items[1:], *["8", "0"][len(items) - 1 :]]
    if (
        len(items) > 3
        or register not in DEFAULT_REGISTERS
        or any(not re.fullmatch(r"\d+", n) for n in numbers)
        or not 1 <= int(numbers[0]) <= 8
        or int(numbers[1]) > 63
    ):
        raise ValueError(
            f"{what} must be an analogue register (A-F), then 1-8 bits and the LSB's bit, not '{' '.join(items)}'"
        )
    return register, int(numbers[0]), int(numbers[1])


def converters(options: dict[str, object], channels: int, kernels: int, bits: int, error) -> dict:
    """The `adc` / `dac` Converters the options ask for (keys "adc" and "dac" of Superpixel)."""
    used = [options[k][0] for k in ("adc", "dac") if k in options]  # type: ignore[index]
    scratch = options.get("analogue_scratch") or next(r for r in DEFAULT_REGISTERS[::-1] if r not in used)
    out = {}
    for key, count, what in (("adc", channels, "input channel"), ("dac", kernels, "kernel")):
        if key not in options:
            continue
        register, depth, unit = options[key]  # type: ignore[misc]
        if count != 1:
            raise error(f"{key} converts one {what}, and the filter has {count}")
        if unit + depth > bits:
            raise error(f"{key}: bits {unit} to {unit + depth - 1} do not fit a bank of {bits} bits")
        if scratch == register:
            raise error(f"{key}: its register {register} cannot be analogue_scratch too")
        out[key] = Converter(str(register), str(scratch), int(depth), int(unit))
    return out


def superpixel_encoding(
    options: dict[str, object], channels: int, kernels: int, error=ValueError, depth: int = 0
) -> Superpixel | None:
    """The superpixel layout and banks the options ask for (None for another plane); `error(message)` builds
    the exception for options that do not fit together."""
    if options.get("mode") != "superpixel":
        given = [k for k in SUPERPIXEL_OPTIONS if k in options]
        if given:
            raise error(f"option {given[0]} is for superpixels: add `option mode = superpixel`")
        return None
    width, height = options.get("tile", (4, 4))  # type: ignore[misc]
    banks = int(options.get("banks", 1))  # type: ignore[call-overload]
    try:
        if options.get("order", "snake") == "hilbert":
            if banks != 1 or width != height:
                raise LayoutError("a Hilbert order fills one square tile: use banks = 1 and a square tile")
            layout = hilbert(width)
        else:
            layout = snake(width, height, banks)
        if "bits" in options:
            bits = int(options["bits"])  # type: ignore[call-overload]
            if bits > layout.bits:
                raise LayoutError(f"bits = {bits} does not fit a bank of {layout.bits} PEs")
            layout = replace(layout, banks=tuple(b[:bits] for b in layout.banks))
    except LayoutError as e:
        raise error(str(e)) from None
    lists = []
    for key, n in (("input_banks", channels), ("output_banks", kernels)):
        items = tuple(options.get(key, (0,)))  # type: ignore[arg-type]
        items = items * n if len(items) == 1 else items
        if len(items) != n or any(b >= len(layout.banks) for b in items):
            raise error(f"{key} needs one bank (0 to {len(layout.banks) - 1}) for all or one per {n}")
        lists.append(items)
    bias: tuple[int, ...] = ()
    if "bias" in options:
        given = tuple(options["bias"])  # type: ignore[arg-type]
        given = given * kernels if len(given) == 1 else given
        if len(given) != kernels:
            raise error(f"bias needs one number for all kernels or one per kernel ({kernels})")
        scaled = [Fraction(b) * 2**depth for b in given]
        if any(b.denominator != 1 for b in scaled):
            raise error(f"bias x 2^{depth} (the depth) must be a whole number: the outputs are integers")
        bias = tuple(int(b) for b in scaled)
    relu = (True,) * kernels if options.get("activation") == "relu" else ()
    conv = converters(options, channels, kernels, layout.bits, error)
    return Superpixel(layout, lists[0], lists[1], bias=bias, relu=relu, **conv)
