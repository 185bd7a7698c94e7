"""Filter configs in the JSON format of the Java Cain tool, read into the same `Filter` as a `.cain` file.

The format is described in docs/language.md ("JSON filter configs"). Every mistake is a `CainError`
pointing at the offending key or value; search settings of the old tool are checked and then ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from cain.diagnostics import CainError
from cain.dialects.goal import filter_to_op
from cain.frontend.json_text import JsonSource, Member, Node, describe, expect
from cain.frontend.options import (
    DEFAULT_INSTRUCTION_SET,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_ERROR,
    MAX_EXPONENT,
    OVERRIDE_KEYS,
    check_bits,
    check_converter,
    check_dregs,
    check_instruction_set,
    check_max_depth,
    check_max_error,
    check_registers,
    converters,
    digital_encoding,
    n_entries,
)
from cain.model.approx import ApproximationError, approximate, format_fraction
from cain.model.dreg import DREGS, Encoding
from cain.model.filter import Filter, Kernel
from cain.model.isa import DEFAULT_REGISTERS, INSTRUCTION_SETS
from cain.model.superpixel import Converter, LayoutError, Superpixel, bit_order_layout

Matrix = tuple[tuple[Fraction, ...], ...]


@dataclass(frozen=True)
class _Key:
    """A key an object may hold: its JSON type(s), whether it must be there, and what it means."""

    kinds: str
    meaning: str
    required: bool = False
    values: tuple[str, ...] = ()
    """For strings: the values the old tool accepts (checked, case-sensitive as there)."""


RUN_CONFIG: dict[str, _Key] = {
    "searchTime": _Key("integer", "search time limit in milliseconds"),
    "timeOut": _Key("boolean", "whether the search stops at searchTime"),
    "workers": _Key("integer", "number of search threads"),
    "traversalAlgorithm": _Key(
        "string", "traversal", values=("SOT", "CGDS", "BFS", "DFS", "HOS", "BestFirstSearch")
    ),
    "costFunction": _Key(
        "string",
        "cost function",
        values=(
            "CircuitDepth",
            "InstructionCost",
            "CircuitDepthThenLength",
            "LengthThenCircuitDepth",
            "PlanLength",
        ),
    ),
    "liveCounter": _Key("boolean", "live progress line"),
    "livePrintPlans": _Key("integer", "announce plans as they are found"),
    "quiet": _Key("boolean", "no start/stop messages"),
    "initialMaxDepth": _Key("integer", "longest plan searched"),
    "forcedDepthReduction": _Key("integer", "plan length reduction required after each plan"),
    "initialMaxCost": _Key("integer", "highest plan cost searched"),
    "forcedCostReduction": _Key("integer", "plan cost reduction required after each plan"),
    "allowableAtomsCoefficient": _Key("integer", "atom-count pruning factor"),
    "goalReductionsPerStep": _Key("integer", "goal-count pruning rate"),
    "goalReductionsTolerance": _Key("integer", "goal-count pruning tolerance"),
}
"""The old tool's search settings: checked, then ignored (Cain's search has its own options)."""

STRATEGY: dict[str, _Key] = {
    "name": _Key(
        "string",
        "pair generation strategy",
        values=("Threshold", "Exhaustive", "AtomDistance", "AtomDistanceSorted"),
    ),
    "ops": _Key("string", "instruction set"),
    "threshold": _Key("integer", "goal size above which the cheap pair generator is used"),
    "heuristic": _Key("string|object", "heuristic"),
}

PAIR_GEN: dict[str, _Key] = {
    "name": _Key("string", "target and goal representation"),
    "configGetter": _Key("string|object", "pair generation strategy"),
    "strategy": _Key("object", "pair generation strategy"),
    "ops": _Key("string", "instruction set"),
    "threshold": _Key("integer", "goal size above which the cheap pair generator is used"),
    "heuristic": _Key("string|object", "heuristic"),
    "outputFormat": _Key("object", "code printer settings"),
    "bits": _Key("integer", "digital: the width of the outputs; every value wraps modulo 2^bits"),
    "scratchRegs": _Key("array", "digital: scratch DREGs"),
    "regMapping": _Key("object", "digital: the DREGs of each register, bit 0 first"),
}

REGISTER_ALLOCATOR: dict[str, _Key] = {
    "name": _Key("string", "register allocator", values=("linearScan",)),
    "availableRegisters": _Key("array", "the register file"),
    "initialRegisters": _Key("array", "the input registers"),
}

TOP_LEVEL: dict[str, _Key] = {
    "name": _Key("string", "the filter's name"),
    "id": _Key("string", "the filter's name"),
    "verbose": _Key("integer|boolean", "verbosity of the old tool"),
    "target": _Key("string", "target machine", values=("scamp5",)),
    "mode": _Key("string", "register kind", values=("analogue", "digital", "superpixel")),
    "goalSystem": _Key(
        "string", "goal representation", values=("Atom", "Array", "Kernel3D", "atom", "array")
    ),
    "maxApproximationDepth": _Key("integer", "largest approximation depth"),
    "maxApproximationError": _Key("number", "largest total approximation error"),
    "3d": _Key(
        "boolean", "innermost arrays are a centred third dimension (true) or the input channels (false)"
    ),
    "filter": _Key("object", "output register -> kernel", required=True),
    "availableRegisters": _Key("array", "the register file"),
    "initialRegisters": _Key("array", "the input registers"),
    "registerAllocator": _Key("object", "register file and input registers"),
    "runConfig": _Key("object", "search settings of the old tool"),
    "pairGen": _Key("object", "instruction set and pair generation"),
    "verifier": _Key("string", "plan checker of the old tool"),
}

KERNEL: dict[str, _Key] = {
    "array": _Key("array", "the weights", required=True),
    "depth": _Key("integer", "the weights are multiplied by 2^depth"),
    "scale": _Key("number", "the weights are multiplied by scale"),
}

PAIR_GENERATORS = ("Scamp5", "Scamp5AnalogueAtomGoal", "Scamp5AnalogueArrayGoal")
DIGITAL_PAIR_GENERATORS = ("Scamp5DigitalAtomGoal", "Scamp5DigitalArrayGoal")
"""`pairGen.name`s of the old tool's digital mode (`"mode": "digital"`)."""
"""`pairGen.name`s of the old tool that target SCAMP-5's analogue registers, which Cain compiles for."""


def _members(node: Node, schema: dict[str, _Key], what: str, source: JsonSource) -> dict[str, Member]:
    """The members of an object, each checked against `schema`: unknown keys, types, required keys."""
    expect(node, "object", what, source)
    members = node.members
    for key, member in members.items():
        spec = schema.get(key)
        if spec is None:
            known = ", ".join(schema)
            raise source.error(f"unknown key '{key}' in {what} (known keys: {known})", member)
        expect(member.node, spec.kinds, f"'{key}'", source)
        if spec.values and member.node.value not in spec.values:
            raise source.error(
                f"'{key}' is {describe(member.node)}; Cain reads only {', '.join(map(json.dumps, spec.values))}",
                member.node,
            )
    missing = [key for key, spec in schema.items() if spec.required and key not in members]
    if missing:
        raise source.error(f"{what} has no '{missing[0]}' ({schema[missing[0]].meaning}); add it", node)
    return members


def _registers(node: Node, what: str, source: JsonSource) -> tuple[str, ...]:
    """Distinct register names from a JSON array of strings, each error at the offending entry."""
    expect(node, "array", what, source)
    items = node.items
    if not items:
        raise source.error(f'{what} is empty; name at least one register, e.g. ["A"]', node)
    seen: dict[str, Node] = {}
    for item in items:
        expect(item, "string", f"every entry of {what}", source)
        try:
            check_registers([item.string])
        except ValueError as e:
            raise source.error(f"{what}: {e}", item) from None
        if item.string in seen:
            raise source.error(f"{what}: register {item.string} is listed twice", item)
        seen[item.string] = item
    return tuple(seen)


def _instruction_set(pair_gen: Member, source: JsonSource, digital: bool) -> tuple[str | None, Node | None]:
    """`ops` from `pairGen` (old layout) or its `configGetter`/`strategy` object (newer layouts)."""
    members = _members(pair_gen.node, PAIR_GEN, "'pairGen'", source)
    name = members.get("name")
    known = DIGITAL_PAIR_GENERATORS if digital else PAIR_GENERATORS
    if name is not None and name.node.value not in known:
        plane = 'the digital plane ("mode": "digital")' if digital else "SCAMP-5's analogue registers"
        raise source.error(
            f"pairGen {describe(name.node)} is not supported: Cain compiles for {plane} with "
            f'{", ".join(map(json.dumps, known))} (the other plane takes "mode": '
            f'"{"analogue" if digital else "digital"}")',
            name.node,
        )
    ops = members.get("ops")
    for key in ("configGetter", "strategy"):
        inner = members.get(key)
        if inner is None:
            continue
        if isinstance(inner.node.value, str):
            if inner.node.value not in STRATEGY["name"].values:
                allowed = ", ".join(map(json.dumps, STRATEGY["name"].values))
                raise source.error(
                    f"'{key}' is {describe(inner.node)}; the old tool knows {allowed}", inner.node
                )
            continue
        strategy = _members(inner.node, STRATEGY, f"'{key}'", source)
        if "ops" in strategy:
            if ops is not None:
                raise source.error(
                    f"'ops' is given twice (also on line {source.line(ops)}); keep one", strategy["ops"]
                )
            ops = strategy["ops"]
    if ops is None:
        return None, None
    return ops.node.string, ops.node


# -- the filter ------------------------------------------------------------------------------------


def parse_filter(text: str, filename: str, overrides: Mapping[str, object] | None = None) -> Filter:
    """The filter a JSON config describes, with its goals approximated; `overrides` (keys `max_depth`,
    `max_error`, `registers`, `instruction_set`) replace the file's settings, as for a `.cain` file."""
    source = JsonSource(filename, text)
    if not text.strip():
        raise source.error('the file is empty; a JSON filter config is an object {"filter": {...}, ...}', 0)
    root = source.parse()
    expect(root, "object", "a JSON filter config", source)
    members = _members(root, TOP_LEVEL, "the config", source)
    if "mode" in members and members["mode"].node.value == "superpixel":
        return _superpixel_filter(members, source, filename, overrides)

    # name
    named = members.get("name") or members.get("id")
    stem = named.node.string if named is not None else Path(filename).stem
    name = re.sub(r"[^A-Za-z0-9_]", "_", str(stem)) or "filter"
    if name[0].isdigit():
        name = f"filter_{name}"

    # registers: at the top (older files) or in registerAllocator (newer files)
    allocator = members.get("registerAllocator")
    holder = members
    if allocator is not None:
        holder = _members(allocator.node, REGISTER_ALLOCATOR, "'registerAllocator'", source)
        for key in ("availableRegisters", "initialRegisters"):
            if key in members:
                raise source.error(
                    f"'{key}' is given both here and in 'registerAllocator' (line "
                    f"{source.line(allocator)}); keep one",
                    members[key],
                )
    registers = DEFAULT_REGISTERS
    available = holder.get("availableRegisters")
    if available is not None:
        registers = _registers(available.node, "'availableRegisters'", source)
    initial = holder.get("initialRegisters")
    if initial is None:
        where = "'registerAllocator'" if allocator is not None else "the config"
        raise source.error(
            f"{where} has no 'initialRegisters' (the registers the input channels arrive in); "
            'add one, e.g. "initialRegisters": ["A"]',
            allocator.node if allocator is not None else root,
        )
    input_registers = _registers(initial.node, "'initialRegisters'", source)

    # approximation and instruction set: the file's, then the command line's
    max_depth, max_error, instructions = DEFAULT_MAX_DEPTH, DEFAULT_MAX_ERROR, DEFAULT_INSTRUCTION_SET
    error_at: Node | None = None
    try:
        if "maxApproximationDepth" in members:
            max_depth = check_max_depth(members["maxApproximationDepth"].node.number)
        if "maxApproximationError" in members:
            error_at = members["maxApproximationError"].node
            max_error = check_max_error(error_at.number)
    except ValueError as e:
        key = "maxApproximationError" if error_at is not None else "maxApproximationDepth"
        raise source.error(f"'{key}': {e}", members[key].node) from None
    if "pairGen" in members:
        digital = "mode" in members and members["mode"].node.value == "digital"
        ops, ops_node = _instruction_set(members["pairGen"], source, digital)
        if ops is not None:
            try:
                instructions = check_instruction_set(ops)
            except ValueError:
                raise source.error(
                    f"unknown instruction set '{ops}' in 'ops' (choose from {', '.join(INSTRUCTION_SETS)})",
                    ops_node,
                ) from None
    if "runConfig" in members:
        _members(members["runConfig"].node, RUN_CONFIG, "'runConfig'", source)
    overridden: set[str] = set()
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key not in OVERRIDE_KEYS:
            raise CainError(f"unknown override '{key}' (known: {', '.join(OVERRIDE_KEYS)})")
        try:
            if key == "max_depth":
                max_depth = check_max_depth(value)
            elif key == "max_error":
                max_error, error_at = check_max_error(value), None
            elif key == "registers":
                registers = check_registers(value)
            else:
                instructions = check_instruction_set(value)
        except ValueError as e:
            raise CainError(f"--{key.replace('_', '-')}: {e}") from None
        overridden.add(OVERRIDE_KEYS[key])
    where_registers = "'availableRegisters' or --registers"

    # inputs
    for register, item in zip(input_registers, initial.node.items, strict=True):
        if register not in registers:
            raise source.error(
                f"input register '{register}' is not in the register file ({' '.join(registers)}); "
                f"add it to {where_registers}",
                item,
            )
    inputs = tuple((r, r) for r in input_registers)

    # outputs
    filter_members = members["filter"].node.members
    if not filter_members:
        raise source.error(
            'the filter has no kernels; map an output register to its weights, e.g. "A": {"depth": -4, '
            '"array": [[1, 2, 1], [2, 4, 2], [1, 2, 1]]}',
            members["filter"].node,
        )
    three_d = bool(members["3d"].node.value) if "3d" in members else False
    weights_per_kernel: list[tuple[Matrix, ...]] = []
    outputs: list[Member] = []
    for register, member in filter_members.items():
        if register not in registers:
            raise source.error(
                f"output register '{register}' is not in the register file ({' '.join(registers)}); "
                f"use one of those, or add it to {where_registers}",
                member,
            )
        weights = _kernel(member, len(inputs), three_d, source)
        if all(w == 0 for m in weights for row in m for w in row):
            raise source.error(f"kernel '{register}' is empty (all its weights are zero)", member)
        weights_per_kernel.append(weights)
        outputs.append(member)

    try:
        depth, goals, errors = approximate(weights_per_kernel, max_depth, max_error)
    except ApproximationError as err:
        at_max = err.errors
        worst = max(range(len(outputs)), key=lambda i: at_max[i])
        detail = (
            ""
            if len(outputs) == 1
            else f" (kernel '{outputs[worst].key}' contributes {format_fraction(at_max[worst])})"
        )
        message = err.message
        for option, key in (("max_depth", "maxApproximationDepth"), ("max_error", "maxApproximationError")):
            given = f"--{option.replace('_', '-')}" if option in overridden else key
            message = message.replace(option, given)
        raise source.error(message + detail, error_at or outputs[worst]) from None
    for output, goal in zip(outputs, goals, strict=True):
        if not goal:
            raise source.error(
                f"kernel '{output.key}' rounds to zero at depth {depth}: lower maxApproximationError so that its "
                "weights survive the approximation",
                output,
            )
    kernels = tuple(
        Kernel(o.key, o.key, w, g, e)
        for o, w, g, e in zip(outputs, weights_per_kernel, goals, errors, strict=True)
    )
    encoding = _digital(members, input_registers, source) if "mode" in members else None
    return Filter(name, inputs, kernels, depth, tuple(registers), instructions, encoding)


def _digital(members: dict[str, Member], inputs: tuple[str, ...], source: JsonSource) -> Encoding | None:
    """The digital encoding of a `"mode": "digital"` config: `pairGen.bits` for every value (wrapping, as the
    old tool); `regMapping` and `scratchRegs` set the DREGs when they name real ones (R0, R5-R12), and are
    placeholders otherwise (then Cain chooses the DREGs and the C header names them)."""
    if members["mode"].node.value != "digital":
        return None
    pair_gen = members["pairGen"].node.members if "pairGen" in members else {}
    options: dict[str, object] = {"mode": "digital"}
    if "bits" in pair_gen:
        try:
            options["bits"] = check_bits(pair_gen["bits"].node.number)
        except ValueError as e:
            raise source.error(f"'bits': {e}", pair_gen["bits"].node) from None
    mapping = pair_gen["regMapping"].node.members if "regMapping" in pair_gen else {}
    named = {k: [item.string for item in m.node.items] for k, m in mapping.items()}
    scratch = (
        [item.string for item in pair_gen["scratchRegs"].node.items] if "scratchRegs" in pair_gen else []
    )
    dregs = [r for regs in named.values() for r in regs] + scratch
    input_dregs = None
    if dregs and all(r in DREGS for r in dregs):
        try:
            options["dregs"] = check_dregs(list(dict.fromkeys(dregs)))
        except ValueError as e:
            raise source.error(f"'regMapping' / 'scratchRegs': {e}", pair_gen["regMapping"].node) from None
        missing = [r for r in inputs if r not in named]
        if missing:
            raise source.error(
                f"'regMapping' has no DREGs for input register {missing[0]}", pair_gen["regMapping"].node
            )
        input_dregs = tuple(tuple(named[r]) for r in inputs)
    encoding = digital_encoding(options, len(inputs))
    assert encoding is not None
    if input_dregs is not None:
        encoding = replace(encoding, input_dregs=input_dregs, input_bits=tuple(map(len, input_dregs)))
    return encoding


def _kernel(member: Member, channels: int, three_d: bool, source: JsonSource) -> tuple[Matrix, ...]:
    """One matrix of weights per input channel from a kernel: a bare array or {array, depth, scale}."""
    what = f"kernel '{member.key}'"
    scale = Fraction(1)
    node = member.node
    if not isinstance(node.value, list):
        expect(node, "object|array", what, source)
        parts = _members(node, KERNEL, what, source)
        if "scale" in parts:
            scale = parts["scale"].node.number
        if "depth" in parts:
            depth_node = parts["depth"].node
            depth = int(depth_node.number)
            if abs(depth) > MAX_EXPONENT:
                raise source.error(
                    f"depth {depth} is out of range (-{MAX_EXPONENT} to {MAX_EXPONENT})", depth_node
                )
            scale *= Fraction(2) ** depth
        node = parts["array"].node
    return _array(node, scale, channels, three_d, what, source)


def _array(node: Node, scale: Fraction, channels: int, three_d: bool, what: str, source: JsonSource):
    """The weights of `array[row][column]`, each entry a number (channel 0) or an array of one number per
    channel (with `3d`, an array centred on channel 0, as the old tool reads it)."""
    expect(node, "array", f"the array of {what}", source)
    rows = node.items
    if not rows:
        raise source.error(f"the array of {what} is empty; give rows of weights, e.g. [[1, 2, 1]]", node)
    for row in rows:
        expect(row, "array", f"each row of {what}", source)
        if not row.items:
            raise source.error(f"a row of {what} is empty", row)
    width = len(rows[0].items)
    for i, row in enumerate(rows):
        if len(row.items) != width:
            raise source.error(
                f"ragged array: row {i + 1} of {what} has {n_entries(len(row.items))} but row 1 has "
                f"{n_entries(width)}; every row needs the same number of entries",
                row,
            )
    entries = [entry for row in rows for entry in row.items]
    centre = 0
    if three_d:
        for entry in entries:
            expect(entry, "array", f'with "3d": true, each entry of {what}', source)
        sizes = {len(e.items) for e in entries}
        if len(sizes) > 1:
            raise source.error(
                f'with "3d": true, the innermost arrays of {what} must all have one length (they have '
                f"{' and '.join(map(str, sorted(sizes)))})",
                node,
            )
        centre = sizes.pop() // 2
    matrices = [[[Fraction(0)] * width for _ in rows] for _ in range(channels)]
    for r, row in enumerate(rows):
        for c, entry in enumerate(row.items):
            values = entry.items if isinstance(entry.value, list) else [entry]
            if not values:
                raise source.error(
                    f"an entry of {what} is an empty array; give one weight per channel", entry
                )
            for k, weight in enumerate(values):
                expect(weight, "number", f"a weight of {what}", source)
                z = k - centre
                if weight.number == 0:
                    continue
                if not 0 <= z < channels:
                    raise source.error(_channel_message(z, k, centre, channels, three_d), weight)
                matrices[z][r][c] = scale * weight.number
    return tuple(tuple(tuple(row) for row in m) for m in matrices)


def _channel_message(z: int, k: int, centre: int, channels: int, three_d: bool) -> str:
    inputs = f"{channels} input register{'s' if channels != 1 else ''} in 'initialRegisters'"
    if three_d:
        return (
            f'with "3d": true the innermost arrays are centred, so entry {k + 1} is channel {z}; there are only '
            f'{inputs} (channels 0 to {channels - 1}). Use "3d": false to number channels from the first entry'
        )
    return f"this weight is for channel {z + 1}, but there are only {inputs}; add its input register there"


def lower_source(text: str, filename: str, overrides: Mapping[str, object] | None = None) -> ModuleOp:
    """A module holding the `goal.filter` of a JSON config."""
    return ModuleOp([filter_to_op(parse_filter(text, filename, overrides))])


# -- superpixel configs ------------------------------------------------------------------------------

SUPERPIXEL_PAIR_GEN: dict[str, _Key] = {
    "strategy": _Key("object", "pair generation strategy"),
    "outputFormat": _Key("object", "code printer settings"),
    "scratchRegs": _Key("array", "scratch DREGs (placeholders: Cain chooses the DREGs)"),
    **{
        key: _Key("string", f"the {what} DREG (a placeholder: Cain binds it, reference section 6)")
        for key, what in (
            ("selectReg", "select"),
            ("maskReg", "mask"),
            ("maskedReg", "masked"),
            ("northReg", "north flag"),
            ("eastReg", "east flag"),
            ("southReg", "south flag"),
            ("westReg", "west flag"),
            ("flagReg", "analogue flag"),
        )
    },
    "width": _Key("integer", "the tile's width in PEs", required=True),
    "height": _Key("integer", "the tile's height in PEs", required=True),
    "bitOrder": _Key("array", "bitOrder[bank][row][column]: the PE of each bit, 1 first", required=True),
    "adc": _Key("object", "analogue to digital conversion before the kernel: analogueScratchReg, channels"),
    "dac": _Key("object", "digital to analogue conversion after the kernel: analogueScratchReg, channels"),
    "bias": _Key("object", "a bias added to outputs after the kernel: unitBit, weights, inRegisters, ..."),
    "activation": _Key("object", "an activation after the kernel: name (relu), registers"),
}


def _bank_register(node: Node, banks: int, what: str, source: JsonSource) -> tuple[int, str]:
    """(bank, name) of a `"bank:REG"` register name."""
    expect(node, "string", what, source)
    match = re.fullmatch(r"(\d+):([A-Za-z_][A-Za-z0-9_]*)", node.string)
    if match is None or int(match[1]) >= banks:
        raise source.error(
            f'{what} {node.string!r} is not "bank:REG" with a bank from 0 to {banks - 1}', node
        )
    return int(match[1]), match[2]


def _superpixel_filter(
    members: dict[str, Member], source: JsonSource, filename: str, overrides: Mapping[str, object] | None
) -> Filter:
    """A `"mode": "superpixel"` config: the tile, its banks and bit order from `pairGen`, the inputs and
    outputs as `"bank:REG"` names; the DREG names are placeholders (Cain chooses the DREGs)."""
    if "pairGen" not in members:
        raise source.error("a superpixel config needs 'pairGen' with width, height and bitOrder", 0)
    pair_gen = _members(members["pairGen"].node, SUPERPIXEL_PAIR_GEN, "'pairGen'", source)
    if "strategy" in pair_gen:
        _members(pair_gen["strategy"].node, STRATEGY, "'strategy'", source)
    if "runConfig" in members:
        _members(members["runConfig"].node, RUN_CONFIG, "'runConfig'", source)
    order = pair_gen["bitOrder"].node
    try:
        layout = bit_order_layout(
            int(pair_gen["width"].node.number), int(pair_gen["height"].node.number), _plain(order, source)
        )
    except (LayoutError, TypeError, ValueError) as e:
        raise source.error(f"'bitOrder': {e}", order) from None
    banks = len(layout.banks)
    holder = members
    if "registerAllocator" in members:
        holder = _members(
            members["registerAllocator"].node, REGISTER_ALLOCATOR, "'registerAllocator'", source
        )
    if "initialRegisters" not in holder:
        raise source.error("the config has no 'initialRegisters', e.g. [\"0:A\"]", 0)
    initial = holder["initialRegisters"].node
    expect(initial, "array", "'initialRegisters'", source)
    inputs = [_bank_register(item, banks, "input register", source) for item in initial.items]
    if not inputs:
        raise source.error("'initialRegisters' is empty; name the input, e.g. \"0:A\"", initial)
    filter_members = members["filter"].node.members
    if not filter_members:
        raise source.error("the filter has no kernels", members["filter"].node)
    outputs = [
        _bank_register(Node(k, m.offset), banks, "output register", source) for k, m in filter_members.items()
    ]
    max_depth, max_error = _approximation(members, overrides or {}, source)
    three_d = bool(members["3d"].node.value) if "3d" in members else False
    weights = [_kernel(m, len(inputs), three_d, source) for m in filter_members.values()]
    try:
        depth, goals, errors = approximate(weights, max_depth, max_error)
    except ApproximationError as err:
        raise source.error(err.message, members["filter"].node) from None
    names = [f"{b}:{r}" for b, r in outputs]
    kernels = tuple(Kernel(n, n, w, g, e) for n, w, g, e in zip(names, weights, goals, errors, strict=True))
    bias, relu = _extras(pair_gen, names, source)
    conv = _converters(pair_gen, [f"{b}:{r}" for b, r in inputs], names, layout.bits, source)
    sp = Superpixel(layout, tuple(b for b, _ in inputs), tuple(b for b, _ in outputs), (), bias, relu, **conv)
    named = members.get("name") or members.get("id")
    stem = named.node.string if named is not None else Path(filename).stem
    name = re.sub(r"[^A-Za-z0-9_]", "_", str(stem)) or "filter"
    name = f"filter_{name}" if name[0].isdigit() else name
    channels = tuple((f"{b}:{r}", f"{b}:{r}") for b, r in inputs)
    registers = tuple(dict.fromkeys((*names, *(c for c, _ in channels))))
    return Filter(name, channels, kernels, depth, registers, superpixel=sp)


def _converters(
    pair_gen: dict[str, Member], inputs: list[str], outputs: list[str], bits: int, source: JsonSource
) -> dict[str, Converter]:
    """Cain-Java's `adc` / `dac`: one enabled channel each, whose `digitalReg` is the input / output,
    `analogueReg`, `bitDepth` and `unitBit` (1 = the LSB), constants in `analogueScratchReg`."""
    out: dict[str, Converter] = {}
    for key, names in (("adc", inputs), ("dac", outputs)):
        if key not in pair_gen:
            continue
        node = pair_gen[key].node
        expect(node, "object", f"'{key}'", source)
        parts = node.members
        channels = parts["channels"].node.items if "channels" in parts else []
        channels = [
            c for c in channels if not ("enabled" in c.members and c.members["enabled"].node.value is False)
        ]
        if len(channels) != 1 or len(names) != 1 or "analogueScratchReg" not in parts:
            what = "input" if key == "adc" else "output"
            raise source.error(
                f"'{key}': Cain converts one channel of a one-{what} filter, with an 'analogueScratchReg'",
                node,
            )
        ch = channels[0].members
        missing = [k for k in ("bitDepth", "unitBit", "analogueReg", "digitalReg") if k not in ch]
        if missing or ch["digitalReg"].node.value != names[0]:
            raise source.error(
                f"'{key}': its channel needs {', '.join(missing) or f'digitalReg {names[0]!r}'}", node
            )
        unit = int(ch["unitBit"].node.number) - 1
        options = {key: (ch["analogueReg"].node.value, int(ch["bitDepth"].node.number), unit)}
        try:
            options[key] = check_converter(list(map(str, options[key])), key)  # type: ignore[assignment]
            options["analogue_scratch"] = check_converter(parts["analogueScratchReg"].node.value, key)[0]
            out |= converters(options, 1, 1, bits, ValueError)
        except ValueError as e:
            raise source.error(f"'{key}': {e}", node) from None
    return out


def _extras(
    pair_gen: dict[str, Member], names: list[str], source: JsonSource
) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Cain-Java's `bias` (weight x 2^(unitBit - 1), truncated, added to the output named in `inRegisters`)
    and `activation` (relu on the outputs named in `registers`), each unless `"enabled": false`."""
    bias, relu = [0] * len(names), [False] * len(names)
    for key in ("bias", "activation"):
        if key not in pair_gen:
            continue
        node = pair_gen[key].node
        expect(node, "object", f"'{key}'", source)
        parts = node.members
        if "enabled" in parts and parts["enabled"].node.value is False:
            continue
        if key == "activation":
            if "name" in parts and parts["name"].node.value != "relu":
                raise source.error(
                    "'activation': Cain (as Cain-Java) knows only \"relu\"", parts["name"].node
                )
            targets = parts["registers"].node.items if "registers" in parts else []
        else:
            unit = int(parts["unitBit"].node.number) if "unitBit" in parts else 1
            weights = parts["weights"].node.items if "weights" in parts else []
            targets = parts["inRegisters"].node.items if "inRegisters" in parts else []
            if len(weights) != len(targets):
                raise source.error("'bias': 'weights' and 'inRegisters' must be as long", node)
        for i, target in enumerate(targets):
            expect(target, "string", f"an entry of '{key}'", source)
            if target.string not in names:
                raise source.error(f"'{key}' names {target.string!r}, which is not an output", target)
            k = names.index(target.string)
            if key == "activation":
                relu[k] = True
            else:
                bias[k] = int(weights[i].number * Fraction(2) ** (unit - 1))
    return (tuple(bias) if any(bias) else ()), (tuple(relu) if any(relu) else ())


def _approximation(
    members: dict[str, Member], overrides: Mapping[str, object], source: JsonSource
) -> tuple[int, Fraction]:
    """maxApproximationDepth and maxApproximationError, the command line's over the file's."""
    limits: list = [DEFAULT_MAX_DEPTH, DEFAULT_MAX_ERROR]
    for k, (key, option, check) in enumerate(
        (
            ("maxApproximationDepth", "max_depth", check_max_depth),
            ("maxApproximationError", "max_error", check_max_error),
        )
    ):
        try:
            if overrides.get(option) is not None:
                limits[k] = check(overrides[option])
            elif key in members:
                limits[k] = check(members[key].node.number)
        except ValueError as e:
            raise source.error(f"'{key}': {e}", members[key].node if key in members else 0) from None
    return limits[0], limits[1]


def _plain(node: Node, source: JsonSource):
    """`bitOrder` as plain Python lists of integers (a located error at any other entry)."""
    if isinstance(node.value, list):
        return [_plain(item, source) for item in node.items]
    expect(node, "integer", "an entry of 'bitOrder'", source)
    return int(node.number)
