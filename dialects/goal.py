"""The `goal` dialect: a filter as the paper's integer goals (section 3.1), before instruction selection.

```
goal.filter @gauss3x3 depth 4 registers ["A", "B", "C", "D", "E", "F"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "blur" -> "A" weights 1/16 [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
      goal #goal.goal<[[1, 2, 1], [2, 4, 2], [1, 2, 1]]> error 0
}
```
A `goal.filter` holds everything in `cain.model.filter.Filter`; `filter_to_op` and `filter_from_op` convert.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from math import lcm

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import Attribute, Block, Data, Dialect, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from cain.diagnostics import CainError
from cain.model.approx import approximate_kernel, format_fraction, rounding_error
from cain.model.dreg import Encoding
from cain.model.filter import Filter, Kernel
from cain.model.goal import Goal
from cain.model.isa import INSTRUCTION_SETS

Matrix = tuple[tuple[Fraction, ...], ...]
Weights = tuple[Matrix, ...]


@irdl_attr_definition
class GoalAttr(Data[Goal]):
    """A goal, printed as one centred square integer matrix per channel (row 0 to the north):
    `#goal.goal<[[1, 2, 1], [2, 4, 2], [1, 2, 1]]>`, or `#goal.goal<[[..]], [[..]]>` for two channels."""

    name = "goal.goal"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Goal:
        with parser.in_angle_brackets():
            matrices = parser.parse_comma_separated_list(
                parser.Delimiter.NONE,
                lambda: parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE,
                    lambda: parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer),
                ),
            )
        for m in matrices:
            if len(m) % 2 == 0 or any(len(row) != len(m) for row in m) or len(m) != len(matrices[0]):
                parser.raise_error("goal matrices must be square, of one odd size, centred on offset (0, 0)")
        return Goal.from_matrices(matrices)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{format_goal(self.data)}>")

    def verify(self) -> None:
        if not isinstance(self.data, Goal):
            raise VerifyException("goal.goal holds a Goal")


def format_goal(goal: Goal, channels: int = 1) -> str:
    """`[[1, 2, 1], ...], [[...]]`: one centred square matrix for each of at least `channels` channels."""
    return ", ".join(
        "[" + ", ".join("[" + ", ".join(map(str, row)) + "]" for row in m) + "]"
        for m in goal.matrices(channels=max(goal.channels, channels, 1))
    )


def parse_rational(parser: AttrParser) -> Fraction:
    """`3`, `-3` or `3/32` (the rationals of goal and scamp5 IR)."""
    numerator = parser.parse_integer(allow_boolean=False)
    if parser.parse_optional_punctuation("/") is None:
        return Fraction(numerator)
    pos = parser.pos
    denominator = parser.parse_integer(allow_boolean=False, allow_negative=False)
    if denominator == 0:
        parser.raise_error("the denominator of a rational must not be zero", pos, parser.pos)
    return Fraction(numerator, denominator)


@irdl_attr_definition
class RationalAttr(Data[Fraction]):
    """An exact rational number: `#goal.rational<3/32>`, `#goal.rational<0>`."""

    name = "goal.rational"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Fraction:
        with parser.in_angle_brackets():
            return parse_rational(parser)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{format_fraction(self.data)}>")

    def verify(self) -> None:
        if not isinstance(self.data, Fraction):
            raise VerifyException("goal.rational holds a Fraction")


def parse_weights(parser: AttrParser) -> Weights:
    """`1/16 [[1, 2, 1], ...], [[...]]`: an optional common scale, then one integer matrix per channel."""
    scale = Fraction(1)
    if parser.parse_optional_punctuation("[") is None:
        scale = parse_rational(parser)
        parser.parse_punctuation("[")
    matrices = []
    while True:
        pos = parser.pos
        matrix = parser.parse_comma_separated_list(
            parser.Delimiter.NONE,
            lambda: parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer),
        )
        parser.parse_punctuation("]")
        if any(len(row) != len(matrix[0]) for row in matrix) or not matrix[0]:
            parser.raise_error("a weight matrix needs rows of one non-zero length", pos, parser.pos)
        matrices.append(tuple(tuple(scale * w for w in row) for row in matrix))
        if parser.parse_optional_punctuation(",") is None:
            break
        parser.parse_punctuation("[")
    return tuple(matrices)


def parse_goal_and_error(parser: AttrParser) -> tuple[Goal, Fraction]:
    """`goal #goal.goal<...> error 3/32`: a kernel's goal and its approximation error."""
    parser.parse_keyword("goal")
    goal = parser.parse_attribute()
    if not isinstance(goal, GoalAttr):
        parser.raise_error("expected a #goal.goal attribute")
    parser.parse_keyword("error")
    return goal.data, parse_rational(parser)


def print_goal_and_error(goal: Goal, error: Fraction, printer: Printer, channels: int = 1) -> None:
    """The inverse of `parse_goal_and_error`, the goal with a matrix for each of at least `channels`."""
    printer.print_string(f"goal #goal.goal<{format_goal(goal, channels)}> error {format_fraction(error)}")


def print_weights(weights: Weights, printer: Printer) -> None:
    """The inverse of `parse_weights`: the weights over their least common denominator."""
    denominator = lcm(*(Fraction(w).denominator for m in weights for row in m for w in row))
    if denominator != 1:
        printer.print_string(f"1/{denominator} ")
    printer.print_string(
        ", ".join(
            "[" + ", ".join("[" + ", ".join(str(int(w * denominator)) for w in row) + "]" for row in m) + "]"
            for m in weights
        )
    )


@irdl_attr_definition
class WeightsAttr(Data[Weights]):
    """A kernel's weights as written, one matrix per input channel (any shape), row 0 to the north:
    `#goal.weights<1/16 [[1, 2, 1], [2, 4, 2], [1, 2, 1]]>`."""

    name = "goal.weights"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Weights:
        with parser.in_angle_brackets():
            return parse_weights(parser)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string("<")
        print_weights(self.data, printer)
        printer.print_string(">")

    def verify(self) -> None:
        if not self.data or any(not m or not m[0] or any(len(r) != len(m[0]) for r in m) for m in self.data):
            raise VerifyException("goal.weights needs one non-empty rectangular matrix per channel")


def parse_settings(parser: Parser) -> tuple[int, list[str], str]:
    """`depth 4 registers ["A", ...] instructions "all"`: the search settings a filter or kernel carries."""
    parser.parse_keyword("depth")
    depth = parser.parse_integer(allow_boolean=False)
    parser.parse_keyword("registers")
    registers = parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parser.parse_str_literal("register")
    )
    parser.parse_keyword("instructions")
    return depth, registers, parser.parse_str_literal("instruction set")


def print_settings(depth: int, registers: Sequence[str], instruction_set: str, printer: Printer) -> None:
    """The inverse of `parse_settings`."""
    printer.print_string(f"depth {depth} registers [")
    printer.print_list(registers, printer.print_string_literal)
    printer.print_string("] instructions ")
    printer.print_string_literal(instruction_set)


# -- operations -------------------------------------------------------------------------------------


@irdl_op_definition
class InputOp(IRDLOperation):
    """An input channel of the filter and the register it arrives in: `goal.input "red" -> "A"`."""

    name = "goal.input"

    channel = prop_def(StringAttr)
    register = prop_def(StringAttr)

    def __init__(self, channel: str, register: str):
        super().__init__(properties={"channel": StringAttr(channel), "register": StringAttr(register)})

    @classmethod
    def parse(cls, parser: Parser) -> InputOp:
        channel = parser.parse_str_literal("channel name")
        parser.parse_punctuation("->")
        register = parser.parse_str_literal("register")
        op = cls(channel, register)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.channel.data)
        printer.print_string(" -> ")
        printer.print_string_literal(self.register.data)
        if self.attributes:
            printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        _check_parent(self)


@irdl_op_definition
class KernelOp(IRDLOperation):
    """An output kernel: its name, the register it must end in, its weights as written, its goal at the
    filter's depth and the approximation error (sum of |weight - goal / 2^depth|)."""

    name = "goal.kernel"

    kernel_name = prop_def(StringAttr, prop_name="name")
    register = prop_def(StringAttr)
    weights = prop_def(WeightsAttr)
    goal = prop_def(GoalAttr)
    error = prop_def(RationalAttr)

    def __init__(self, name: str, register: str, weights: Weights, goal: Goal, error: Fraction):
        super().__init__(
            properties={
                "name": StringAttr(name),
                "register": StringAttr(register),
                "weights": WeightsAttr(weights),
                "goal": GoalAttr(goal),
                "error": RationalAttr(Fraction(error)),
            }
        )

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_str_literal("kernel name")
        parser.parse_punctuation("->")
        register = parser.parse_str_literal("register")
        parser.parse_keyword("weights")
        weights = parse_weights(parser)
        goal, error = parse_goal_and_error(parser)
        op = cls(name, register, weights, goal, error)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.kernel_name.data)
        printer.print_string(" -> ")
        printer.print_string_literal(self.register.data)
        printer.print_string(" weights ")
        print_weights(self.weights.data, printer)
        printer.print_string(" ")
        print_goal_and_error(self.goal.data, self.error.data, printer, len(self.weights.data))
        if self.attributes:
            printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        _check_parent(self)
        if self.error.data < 0:
            raise VerifyException(f"kernel '{self.kernel_name.data}' has a negative error")
        if not self.goal.data:
            raise VerifyException(f"kernel '{self.kernel_name.data}' has an empty goal")


@irdl_op_definition
class FilterOp(IRDLOperation):
    """A filter: its input channels (`goal.input`), its output kernels (`goal.kernel`), the shared
    approximation depth, the register file and the instruction set the search may use."""

    name = "goal.filter"

    sym_name = prop_def(StringAttr)
    depth = prop_def(IntAttr)
    registers = prop_def(ArrayAttr[StringAttr])
    instruction_set = prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(NoTerminator(), IsolatedFromAbove(), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        depth: int,
        registers: Sequence[str],
        instruction_set: str,
        ops: Sequence[InputOp | KernelOp] | Region = (),
    ):
        region = ops if isinstance(ops, Region) else Region(Block(ops))
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "depth": IntAttr(depth),
                "registers": ArrayAttr(StringAttr(r) for r in registers),
                "instruction_set": StringAttr(instruction_set),
            },
            regions=[region],
        )

    @property
    def inputs(self) -> list[InputOp]:
        return [op for op in self.body.block.ops if isinstance(op, InputOp)]

    @property
    def kernels(self) -> list[KernelOp]:
        return [op for op in self.body.block.ops if isinstance(op, KernelOp)]

    @classmethod
    def parse(cls, parser: Parser) -> FilterOp:
        name = parser.parse_symbol_name().data
        depth, registers, instruction_set = parse_settings(parser)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region()
        if not region.blocks:
            region.add_block(Block())
        op = cls(name, depth, registers, instruction_set, region)
        if attributes is not None:
            op.attributes |= attributes.data
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" ")
        registers = [r.data for r in self.registers.data]
        print_settings(self.depth.data, registers, self.instruction_set.data, printer)
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    def verify_(self) -> None:
        name = self.sym_name.data
        depth = self.depth.data
        if depth < 0:
            raise VerifyException(f"filter @{name}: depth must be at least 0, not {depth}")
        registers = [r.data for r in self.registers.data]
        if not registers:
            raise VerifyException(f"filter @{name}: the register file is empty")
        if len(set(registers)) != len(registers):
            raise VerifyException(f"filter @{name}: a register is listed twice in {registers}")
        if self.instruction_set.data not in INSTRUCTION_SETS:
            raise VerifyException(
                f"filter @{name}: unknown instruction set '{self.instruction_set.data}' "
                f"(choose from {', '.join(INSTRUCTION_SETS)})"
            )
        if self.body.block.args:
            raise VerifyException(f"filter @{name}: the body takes no arguments")
        for op in self.body.block.ops:
            if not isinstance(op, InputOp | KernelOp):
                raise VerifyException(
                    f"filter @{name}: only goal.input and goal.kernel belong in it, not {op.name}"
                )
        inputs, kernels = self.inputs, self.kernels
        if not inputs:
            raise VerifyException(f"filter @{name} has no goal.input")
        if not kernels:
            raise VerifyException(f"filter @{name} has no goal.kernel")
        _check_distinct(name, "input channel", [i.channel.data for i in inputs])
        _check_distinct(name, "input register", [i.register.data for i in inputs])
        _check_distinct(name, "kernel name", [k.kernel_name.data for k in kernels])
        _check_distinct(name, "output register", [k.register.data for k in kernels])
        for register in [i.register.data for i in inputs] + [k.register.data for k in kernels]:
            if register not in registers:
                raise VerifyException(
                    f"filter @{name}: register '{register}' is not in the register file {registers}"
                )
        for kernel in kernels:
            weights = kernel.weights.data
            if len(weights) != len(inputs):
                raise VerifyException(
                    f"filter @{name}: kernel '{kernel.kernel_name.data}' has weights for {len(weights)} channels "
                    f"but the filter has {len(inputs)} inputs"
                )
            try:
                error = rounding_error(weights, depth, kernel.goal.data)
            except ValueError as e:
                nearest, _ = approximate_kernel(weights, depth)
                raise VerifyException(
                    f"filter @{name}: the goal of kernel '{kernel.kernel_name.data}' is not its weights times "
                    f"2^{depth} rounded ({e}); rounded to the nearest it is {GoalAttr(nearest)}"
                ) from None
            if error != kernel.error.data:
                raise VerifyException(
                    f"filter @{name}: kernel '{kernel.kernel_name.data}' has error {format_fraction(kernel.error.data)}"
                    f" but its goal is off its weights by {format_fraction(error)}"
                )


def _check_parent(op: InputOp | KernelOp) -> None:
    if not isinstance(op.parent_op(), FilterOp):
        raise VerifyException(f"{op.name} must be directly inside a goal.filter")


def _check_distinct(name: str, what: str, values: list[str]) -> None:
    for i, value in enumerate(values):
        if value in values[:i]:
            raise VerifyException(f"filter @{name}: {what} '{value}' appears twice")


def encoding_attr(e: Encoding) -> DictionaryAttr:
    """A filter's digital encoding as the `digital` attribute of its op: `{input_bits = [1 : i64], bits = 2 :
    i64, dregs = ["R5", ...], input_dregs = [["R9", "R10"]]}` (`bits` and `input_dregs` when set)."""
    fields: dict[str, Attribute] = {
        "input_bits": ArrayAttr(IntegerAttr(b, i64) for b in e.input_bits),
        "dregs": ArrayAttr(StringAttr(r) for r in e.dregs),
    }
    if e.bits is not None:
        fields["bits"] = IntegerAttr(e.bits, i64)
    if e.input_dregs is not None:
        fields["input_dregs"] = ArrayAttr(ArrayAttr(StringAttr(r) for r in regs) for regs in e.input_dregs)
    return DictionaryAttr(fields)


def encoding_of(attributes: Mapping[str, Attribute]) -> Encoding | None:
    """The digital encoding an op's `digital` attribute holds (None: the analogue plane)."""
    attr = attributes.get("digital")
    if attr is None:
        return None
    try:
        assert isinstance(attr, DictionaryAttr)
        fields = attr.data
        widths = tuple(b.value.data for b in fields["input_bits"].data)  # type: ignore[union-attr]
        dregs = tuple(r.data for r in fields["dregs"].data)  # type: ignore[union-attr]
        bits = fields["bits"].value.data if "bits" in fields else None  # type: ignore[union-attr]
        pinned = fields.get("input_dregs")
        input_dregs = (
            tuple(tuple(r.data for r in regs.data) for regs in pinned.data)  # type: ignore[union-attr]
            if pinned is not None
            else None
        )
    except (AssertionError, AttributeError, KeyError) as e:
        raise VerifyException(f"the digital attribute {attr} is not a digital encoding ({e})") from None
    return Encoding(widths, bits, dregs, input_dregs)


def filter_to_op(f: Filter) -> FilterOp:
    """The `goal.filter` op of a filter (not of a superpixel filter: the goal IR carries no tile layout)."""
    if f.superpixel is not None:
        raise CainError(
            f"{f.name}: superpixel mode compiles with `cain` or cain.compile; the goal IR (cain-opt) does not "
            "carry a tile layout"
        )
    ops: list[InputOp | KernelOp] = [InputOp(channel, register) for channel, register in f.inputs]
    ops += [KernelOp(k.name, k.register, k.weights, k.goal, k.error) for k in f.kernels]
    op = FilterOp(f.name, f.depth, f.registers, f.instruction_set, ops)
    if f.encoding is not None:
        op.attributes["digital"] = encoding_attr(f.encoding)
    return op


def filter_from_op(op: FilterOp) -> Filter:
    """The filter a `goal.filter` op holds (the inverse of `filter_to_op`)."""
    return Filter(
        name=op.sym_name.data,
        inputs=tuple((i.channel.data, i.register.data) for i in op.inputs),
        kernels=tuple(
            Kernel(k.kernel_name.data, k.register.data, k.weights.data, k.goal.data, k.error.data)
            for k in op.kernels
        ),
        depth=op.depth.data,
        registers=tuple(r.data for r in op.registers.data),
        instruction_set=op.instruction_set.data,
        encoding=encoding_of(op.attributes),
    )


GoalDialect = Dialect("goal", [FilterOp, InputOp, KernelOp], [GoalAttr, WeightsAttr, RationalAttr])
