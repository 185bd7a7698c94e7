"""The `scamp5` dialect: SCAMP-5 macro instructions on SSA values, and the bus micro-operations.

```
scamp5.kernel @gauss3(%0 : !scamp5.areg<A>) depth 4 registers ["A", "B", "C", "D", "E", "F"]
    instructions "all" inputs ["image" -> "A"]
    outputs [("blur" -> "A" goal #goal.goal<[[1, 2, 1], [2, 4, 2], [1, 2, 1]]> error 0 weights 1/16 [[...]])] {
  %1 = scamp5.movx %0 north : !scamp5.areg<A> -> !scamp5.areg<B>
  %2 = scamp5.add %0, %1 : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
  %3 = scamp5.div %2 scratch C : !scamp5.areg<A> -> !scamp5.areg<B>
  scamp5.output %3 : !scamp5.areg<B>
}
```
The header prints on one line (wrapped above), except that several outputs print one per line.
One op per macro of `cain.isa.MACROS`, generated from the table. Registers are types: `!scamp5.areg`
before allocation, `!scamp5.areg<A>` after; once allocated, each op's verifier enforces the bus rules
(`Macro.distinct_roles`, `tied`, `scratch`). After `expand-bus` the kernel body holds `scamp5.bus`,
`scamp5.bus2`, `scamp5.bus3` micro-ops on named registers (`scamp5.bus NEWS, A, B`: the first
destinations, then sources, as the SDK writes them) and `scamp5.output` has no operands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import ClassVar

from cain.dialects.goal import (
    GoalAttr,
    RationalAttr,
    Weights,
    WeightsAttr,
    parse_goal_and_error,
    parse_settings,
    parse_weights,
    print_goal_and_error,
    print_settings,
    print_weights,
)
from xdsl.dialects.builtin import ArrayAttr, IntAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, IsTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from cain.diagnostics import CainError
from cain.filter import Filter, Kernel
from cain.goal import Goal
from cain.isa import BUS_KINDS, DIRECTIONS, MACROS, NEWS, BusOp, Macro
from cain.program import Instr, Program
from cain.sim import NEIGHBOUR_SIDE, SimulationError, check_bus

# -- registers as types -----------------------------------------------------------------------------


@irdl_attr_definition
class ARegType(ParametrizedAttribute, TypeAttribute):
    """An analogue register: `!scamp5.areg` (not yet allocated) or `!scamp5.areg<A>`."""

    name = "scamp5.areg"

    register: StringAttr

    def __init__(self, register: str = ""):
        super().__init__(StringAttr(register))

    @property
    def allocated(self) -> bool:
        """Whether the register is named (after regalloc)."""
        return bool(self.register.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        if parser.parse_optional_punctuation("<") is None:
            return [StringAttr("")]
        register = parser.parse_identifier("register name")
        parser.parse_punctuation(">")
        return [StringAttr(register)]

    def print_parameters(self, printer: Printer) -> None:
        if self.register.data:
            printer.print_string(f"<{self.register.data}>")


def register_of(value: SSAValue) -> str:
    """The register of an allocated value, "" before allocation."""
    t = value.type
    return t.register.data if isinstance(t, ARegType) else ""


# -- macro ops ----------------------------------------------------------------------------------------

ROLE_WORDS = {
    "y": "result",
    "y0": "first result",
    "y1": "second result",
    "x0": "first operand",
    "x1": "second operand",
    "x2": "third operand",
    "s0": "first scratch register",
    "s1": "second scratch register",
}


def _role_word(macro: Macro, role: str) -> str:
    """A macro role in words for verifier messages, e.g. `the first operand (x0)`."""
    if macro.name.startswith("sub") and role == "x1":
        return "the subtracted operand (x1)"
    return f"the {ROLE_WORDS.get(role, role)} ({role})"


def _parse_operands(parser: Parser) -> list[UnresolvedOperand]:
    """`%0, %1`: the operands of a macro or of `scamp5.output`, none if no `%` follows."""
    return (
        parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        )
        or []
    )


class MacroOp(IRDLOperation):
    """Base of the generated macro ops: `results = macro operands directions [scratch regs]`."""

    MACRO: ClassVar[Macro]

    def __init__(
        self,
        operands: Sequence[SSAValue],
        directions: Sequence[str] = (),
        result_types: Sequence[Attribute] | None = None,
        scratch: Sequence[str] | None = None,
    ):
        properties: dict[str, Attribute] = {"directions": ArrayAttr(StringAttr(d) for d in directions)}
        if scratch:
            properties["scratch"] = ArrayAttr(StringAttr(s) for s in scratch)
        types = list(result_types) if result_types is not None else [ARegType()] * len(self.MACRO.results)
        super().__init__(operands=list(operands), result_types=types, properties=properties)

    @property
    def direction_names(self) -> tuple[str, ...]:
        """The op's directions, e.g. `("north",)`."""
        return tuple(d.data for d in self.directions)  # type: ignore[attr-defined]

    @property
    def scratch_registers(self) -> tuple[str, ...]:
        """The scratch registers regalloc chose, empty before allocation."""
        s = self.scratch  # type: ignore[attr-defined]
        return tuple(r.data for r in s) if s is not None else ()

    def role_registers(self) -> dict[str, str]:
        """Role -> register, for an allocated op."""
        roles = {role: register_of(v) for role, v in zip(self.MACRO.results, self.results, strict=True)}
        roles.update(
            (role, register_of(v)) for role, v in zip(self.MACRO.operands, self.operands, strict=True)
        )
        roles.update(zip(self.MACRO.scratch, self.scratch_registers, strict=False))
        return roles

    @classmethod
    def parse(cls, parser: Parser) -> MacroOp:
        unresolved = _parse_operands(parser)
        directions: list[str] = []
        scratch = None
        while True:
            pos = parser.pos
            word = parser.parse_optional_identifier()
            if word is None:
                break
            if word == "scratch":
                scratch = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_identifier)
                break
            if word not in DIRECTIONS:
                parser.raise_error(
                    f"unknown direction '{word}' (choose from {', '.join(DIRECTIONS)})", pos, parser.pos
                )
            directions.append(word)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        if parser.parse_optional_punctuation("(") is not None:
            parser.parse_punctuation(")")
            operand_types = []
        else:
            operand_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(operand_types) != len(unresolved):
            parser.raise_error(f"expected {len(unresolved)} operand type(s)", pos, parser.pos)
        parser.parse_punctuation("->")
        result_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        operands = parser.resolve_operands(unresolved, operand_types, pos)
        op = cls(operands, directions, result_types, scratch)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        if self.operands:
            printer.print_string(" ")
            printer.print_list(self.operands, printer.print_operand)
        for d in self.direction_names:
            printer.print_string(f" {d}")
        if self.scratch_registers:
            printer.print_string(" scratch " + ", ".join(self.scratch_registers))
        if self.attributes:
            printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if self.operands:
            printer.print_list(self.operand_types, printer.print_attribute)
        else:
            printer.print_string("()")
        printer.print_string(" -> ")
        printer.print_list(self.result_types, printer.print_attribute)

    def verify_(self) -> None:
        m = self.MACRO
        name = m.name
        dirs = self.direction_names
        if len(dirs) != m.directions:
            raise VerifyException(f"{name}: takes {m.directions} direction(s), has {len(dirs)}")
        for d in dirs:
            if d not in DIRECTIONS:
                raise VerifyException(
                    f"{name}: unknown direction '{d}' (choose from {', '.join(DIRECTIONS)})"
                )
        types = [*self.operand_types, *self.result_types]
        if not all(isinstance(t, ARegType) for t in types):
            raise VerifyException(f"{name}: operands and results are !scamp5.areg values")
        allocated = [t.allocated for t in types]  # type: ignore[attr-defined]
        if not any(allocated):
            if self.scratch_registers:
                raise VerifyException(
                    f"{name}: scratch registers are chosen by regalloc, with the other registers"
                )
            return
        if not all(allocated):
            raise VerifyException(f"{name}: either every operand and result has a register, or none")
        if len(self.scratch_registers) != len(m.scratch):
            raise VerifyException(
                f"{name}: needs {len(m.scratch)} scratch register(s) once allocated, has {len(self.scratch_registers)}"
            )
        roles = self.role_registers()
        for result, operand in m.tied:
            if roles[result] != roles[operand]:
                raise VerifyException(
                    f"{name}: {_role_word(m, result)} must be in the register of {_role_word(m, operand)}: "
                    f"the macro works in place"
                )
        for a, b in m.distinct_roles:
            if roles[a] == roles[b]:
                if b in m.results:
                    a, b = b, a
                raise VerifyException(
                    f"{name}: {_role_word(m, a)} must be in a different register from {_role_word(m, b)} "
                    f"(both are {roles[a]}): a register appears at most once in a bus micro-op, and a register "
                    f"written there must not hold an operand read later"
                )


def _macro_op(macro: Macro) -> type[MacroOp]:
    """The op class of one table entry: an operand per operand role, a result per result role."""
    namespace: dict[str, object] = {
        "name": f"scamp5.{macro.name}",
        "MACRO": macro,
        "__doc__": f"`{macro.sdk}`: {macro.doc} ({macro.icws} ICWs).",
        "__module__": __name__,
        "__annotations__": {"MACRO": "ClassVar[Macro]"},
    }
    for role in macro.operands:
        namespace[role] = operand_def(ARegType)
    for role in macro.results:
        namespace[role] = result_def(ARegType)
    namespace["directions"] = prop_def(ArrayAttr[StringAttr])
    namespace["scratch"] = opt_prop_def(ArrayAttr[StringAttr])
    cls = type(f"{macro.name.capitalize()}Op", (MacroOp,), namespace)
    return irdl_op_definition(cls)


MACRO_OPS: dict[str, type[MacroOp]] = {name: _macro_op(m) for name, m in MACROS.items()}
"""Macro name -> op class, one per entry of the instruction table."""


# -- bus micro-ops --------------------------------------------------------------------------------


class BusMicroOp(IRDLOperation):
    """Base of `scamp5.bus`/`bus2`/`bus3`: destinations then sources, on named registers."""

    KIND: ClassVar[str]
    dests = prop_def(ArrayAttr[StringAttr])
    srcs = prop_def(ArrayAttr[StringAttr])

    def __init__(self, dests: Sequence[str], srcs: Sequence[str] = ()):
        super().__init__(
            properties={
                "dests": ArrayAttr(StringAttr(d) for d in dests),
                "srcs": ArrayAttr(StringAttr(s) for s in srcs),
            }
        )

    @staticmethod
    def from_bus_op(op: BusOp) -> BusMicroOp:
        """The op of a `cain.isa.BusOp`, of the class its kind names."""
        return BUS_OPS[op.kind](op.dests, op.srcs)

    def bus_op(self) -> BusOp:
        """The micro-op as a `cain.isa.BusOp`, for the simulator and the C printer."""
        return BusOp(self.KIND, tuple(d.data for d in self.dests), tuple(s.data for s in self.srcs))

    @classmethod
    def parse(cls, parser: Parser) -> BusMicroOp:
        pos = parser.pos
        names = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_identifier)
        n = BUS_KINDS[cls.KIND][0]
        if len(names) < n:
            parser.raise_error(f"{cls.KIND} writes {n} destination(s)", pos, parser.pos)
        op = cls(names[:n], names[n:])
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        op = self.bus_op()
        printer.print_string(" " + ", ".join(op.dests + op.srcs))
        if self.attributes:
            printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        try:
            check_bus(self.bus_op())
        except SimulationError as e:
            raise VerifyException(str(e)) from None


@irdl_op_definition
class BusOp1(BusMicroOp):
    """`a := -(s0 + ...)`, up to 4 sources (`a := 0` with none): one ICW."""

    name = "scamp5.bus"
    KIND: ClassVar[str] = "bus"


@irdl_op_definition
class Bus2Op(BusMicroOp):
    """`a := b := -(s0 + s1) / 2`: one ICW."""

    name = "scamp5.bus2"
    KIND: ClassVar[str] = "bus2"


@irdl_op_definition
class Bus3Op(BusMicroOp):
    """`a := b := c := -s0 / 3`: one ICW."""

    name = "scamp5.bus3"
    KIND: ClassVar[str] = "bus3"


BUS_OPS: dict[str, type[BusMicroOp]] = {"bus": BusOp1, "bus2": Bus2Op, "bus3": Bus3Op}


# -- kernel -----------------------------------------------------------------------------------------


@irdl_op_definition
class OutputOp(IRDLOperation):
    """Ends a kernel: its output values in output order (none at bus level, where the kernel's output
    registers say where the outputs are)."""

    name = "scamp5.output"

    outs = var_operand_def(ARegType)
    traits = traits_def(IsTerminator())

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(values)])

    @classmethod
    def parse(cls, parser: Parser) -> OutputOp:
        values = []
        unresolved = _parse_operands(parser)
        if unresolved:
            parser.parse_punctuation(":")
            pos = parser.pos
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            values = parser.resolve_operands(unresolved, types, pos)
        op = cls(values)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        if self.outs:
            printer.print_string(" ")
            printer.print_list(self.outs, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list([v.type for v in self.outs], printer.print_attribute)
        if self.attributes:
            printer.print_op_attributes(self.attributes)


@dataclass
class KernelInfo:
    """Everything a kernel op carries besides its instructions: what verify and emit need."""

    name: str
    input_channels: list[str]
    input_registers: list[str]
    output_names: list[str]
    output_registers: list[str]
    goals: list[Goal]
    errors: list[Fraction]
    weights: list[Weights]
    depth: int
    registers: list[str]
    instruction_set: str = "all"
    counts: dict[str, int] = field(default_factory=dict)
    """Extra integer attributes of the kernel (`macros`, `icws`)."""

    def input_goals(self) -> list[Goal]:
        """Each input channel as a goal: `2^depth` atoms at the centre of its channel."""
        return [Goal.identity(2**self.depth, z) for z in range(len(self.input_channels))]

    def filter(self) -> Filter:
        """The filter the kernel computes (the inverse of `from_filter`)."""
        kernels = tuple(
            Kernel(n, r, w, g, e)
            for n, r, w, g, e in zip(
                self.output_names, self.output_registers, self.weights, self.goals, self.errors, strict=True
            )
        )
        return Filter(
            self.name,
            tuple(zip(self.input_channels, self.input_registers, strict=True)),
            kernels,
            self.depth,
            tuple(self.registers),
            self.instruction_set,
        )

    @staticmethod
    def from_filter(f: Filter) -> KernelInfo:
        """What a kernel op for filter `f` carries, with no counts yet."""
        return KernelInfo(
            name=f.name,
            input_channels=[c for c, _ in f.inputs],
            input_registers=[r for _, r in f.inputs],
            output_names=[k.name for k in f.kernels],
            output_registers=[k.register for k in f.kernels],
            goals=[k.goal for k in f.kernels],
            errors=[k.error for k in f.kernels],
            weights=[k.weights for k in f.kernels],
            depth=f.depth,
            registers=list(f.registers),
            instruction_set=f.instruction_set,
        )


def _strings(values: Sequence[str]) -> ArrayAttr[StringAttr]:
    return ArrayAttr(StringAttr(v) for v in values)


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A SCAMP-5 kernel for one filter: its inputs (block arguments, pinned to registers), its
    instructions, and its outputs (names, registers, goals, errors, weights), terminated by
    `scamp5.output`."""

    name = "scamp5.kernel"

    sym_name = prop_def(StringAttr)
    input_channels = prop_def(ArrayAttr[StringAttr])
    input_registers = prop_def(ArrayAttr[StringAttr])
    output_names = prop_def(ArrayAttr[StringAttr])
    output_registers = prop_def(ArrayAttr[StringAttr])
    goals = prop_def(ArrayAttr[GoalAttr])
    errors = prop_def(ArrayAttr[RationalAttr])
    weights = prop_def(ArrayAttr[WeightsAttr])
    depth = prop_def(IntAttr)
    registers = prop_def(ArrayAttr[StringAttr])
    instruction_set = prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(self, info: KernelInfo, body: Region):
        super().__init__(
            properties={
                "sym_name": StringAttr(info.name),
                "input_channels": _strings(info.input_channels),
                "input_registers": _strings(info.input_registers),
                "output_names": _strings(info.output_names),
                "output_registers": _strings(info.output_registers),
                "goals": ArrayAttr(GoalAttr(g) for g in info.goals),
                "errors": ArrayAttr(RationalAttr(Fraction(e)) for e in info.errors),
                "weights": ArrayAttr(WeightsAttr(w) for w in info.weights),
                "depth": IntAttr(info.depth),
                "registers": _strings(info.registers),
                "instruction_set": StringAttr(info.instruction_set),
            },
            regions=[body],
        )
        for key, value in info.counts.items():
            self.attributes[key] = IntegerAttr(value, i64)

    def info(self) -> KernelInfo:
        """The header properties (and integer attributes, as `counts`) in plain Python."""
        return KernelInfo(
            name=self.sym_name.data,
            input_channels=[s.data for s in self.input_channels],
            input_registers=[s.data for s in self.input_registers],
            output_names=[s.data for s in self.output_names],
            output_registers=[s.data for s in self.output_registers],
            goals=[g.data for g in self.goals],
            errors=[e.data for e in self.errors],
            weights=[w.data for w in self.weights],
            depth=self.depth.data,
            registers=[s.data for s in self.registers],
            instruction_set=self.instruction_set.data,
            counts={k: v.value.data for k, v in self.attributes.items() if isinstance(v, IntegerAttr)},
        )

    @property
    def block(self) -> Block:
        return self.body.block

    @property
    def output(self) -> OutputOp:
        last = self.block.last_op
        assert isinstance(last, OutputOp)
        return last

    @property
    def is_bus_level(self) -> bool:
        """Whether `expand-bus` has run: the body holds bus micro-ops."""
        return any(isinstance(op, BusMicroOp) for op in self.block.ops)

    @property
    def is_allocated(self) -> bool:
        """Whether every value has a register (after `regalloc`)."""
        values = [*self.block.args, *(r for op in self.block.ops for r in op.results)]
        return bool(values) and all(register_of(v) for v in values)

    # syntax ---------------------------------------------------------------------------------------
    def print(self, printer: Printer) -> None:
        info = self.info()
        printer.print_string(" ")
        printer.print_symbol_name(info.name)
        printer.print_string("(")
        printer.print_list(self.block.args, printer.print_block_argument)
        printer.print_string(") ")
        print_settings(info.depth, info.registers, info.instruction_set, printer)
        printer.print_string(" inputs [")
        printer.print_list(
            zip(info.input_channels, info.input_registers, strict=True),
            lambda cr: (
                printer.print_string_literal(cr[0]),
                printer.print_string(" -> "),
                printer.print_string_literal(cr[1]),
            ),
        )
        printer.print_string("] outputs [")

        def print_output(k: int) -> None:
            printer.print_string("(")
            printer.print_string_literal(info.output_names[k])
            printer.print_string(" -> ")
            printer.print_string_literal(info.output_registers[k])
            printer.print_string(" ")
            print_goal_and_error(info.goals[k], info.errors[k], printer)
            printer.print_string(" weights ")
            print_weights(info.weights[k], printer)
            printer.print_string(")")

        if len(info.output_names) == 1:
            print_output(0)
        else:  # one output per line
            with printer.indented(2):
                for k in range(len(info.output_names)):
                    printer.print_string("\n" if k == 0 else ",\n")
                    print_output(k)
            printer.print_string("\n")
        printer.print_string("]")
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_symbol_name().data
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_argument)
        depth, registers, instruction_set = parse_settings(parser)
        parser.parse_keyword("inputs")

        def parse_input() -> tuple[str, str]:
            channel = parser.parse_str_literal()
            parser.parse_punctuation("->")
            return channel, parser.parse_str_literal()

        inputs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parse_input)
        parser.parse_keyword("outputs")

        def parse_output() -> Kernel:
            parser.parse_punctuation("(")
            out = parser.parse_str_literal()
            parser.parse_punctuation("->")
            register = parser.parse_str_literal()
            goal, error = parse_goal_and_error(parser)
            parser.parse_keyword("weights")
            weights = parse_weights(parser)
            parser.parse_punctuation(")")
            return Kernel(out, register, weights, goal, error)

        outputs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parse_output)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region(args)
        filt = Filter(name, tuple(inputs), tuple(outputs), depth, tuple(registers), instruction_set)
        op = cls(KernelInfo.from_filter(filt), body)
        if attributes is not None:
            op.attributes |= attributes.data
        return op

    def verify_(self) -> None:
        info = self.info()
        name = info.name
        if info.depth < 0:
            raise VerifyException(f"kernel @{name}: depth must be at least 0, not {info.depth}")
        if len(info.input_channels) != len(info.input_registers) or len(self.block.args) != len(
            info.input_channels
        ):
            raise VerifyException(f"kernel @{name}: one block argument and one register per input channel")
        n = len(info.output_names)
        if not (len(info.output_registers) == len(info.goals) == len(info.errors) == len(info.weights) == n):
            raise VerifyException(
                f"kernel @{name}: every output needs a name, register, goal, error and weights"
            )
        if len(set(info.output_registers)) != n:
            raise VerifyException(f"kernel @{name}: two outputs are pinned to one register")
        if not isinstance(self.block.last_op, OutputOp):
            raise VerifyException(f"kernel @{name}: the body must end with scamp5.output")
        outs = self.output.outs
        bus = self.is_bus_level
        if bus and outs:
            raise VerifyException(f"kernel @{name}: at bus level scamp5.output takes no values")
        if not bus and len(outs) != n:
            raise VerifyException(
                f"kernel @{name}: scamp5.output takes {n} value(s), one per output, has {len(outs)}"
            )
        for arg, reg in zip(self.block.args, info.input_registers, strict=True):
            r = register_of(arg)
            if r and r != reg:
                raise VerifyException(f"kernel @{name}: input {arg.index} arrives in register {reg}, not {r}")
        for k, (v, reg) in enumerate(zip(outs, info.output_registers, strict=False)):
            r = register_of(v)
            if r and r != reg:
                raise VerifyException(
                    f"kernel @{name}: output '{info.output_names[k]}' must end in register {reg}, but its value is in {r}"
                )
        file = set(info.registers)
        for kind, pinned in (("input", info.input_registers), ("output", info.output_registers)):
            for reg in pinned:
                if reg not in file:
                    raise VerifyException(
                        f"kernel @{name}: {kind} register {reg} is not in the register file ({', '.join(info.registers)})"
                    )
        for op in self.block.ops:
            used = [register_of(v) for v in (*op.results, *op.operands)]
            if isinstance(op, MacroOp):
                used += op.scratch_registers
            if isinstance(op, BusMicroOp):
                bus_op = op.bus_op()
                used += [r for r in bus_op.dests + bus_op.srcs if r != NEWS and r not in NEIGHBOUR_SIDE]
            for reg in used:
                if reg and reg not in file:
                    raise VerifyException(
                        f"kernel @{name}: {op.name} uses register {reg}, which is not in the register file "
                        f"({', '.join(info.registers)})"
                    )
            if not isinstance(op, (MacroOp, BusMicroOp, OutputOp)):
                raise VerifyException(f"kernel @{name}: {op.name} is not a scamp5 instruction")
            if bus and isinstance(op, MacroOp):
                raise VerifyException(f"kernel @{name}: macros and bus micro-ops cannot be mixed ({op.name})")


# -- conversions ------------------------------------------------------------------------------------


def build_kernel(program: Program, info: KernelInfo) -> KernelOp:
    """A kernel op holding `program` (typed with registers when `program.registers` is filled)."""
    regs = program.registers

    def type_of(v: int) -> ARegType:
        return ARegType(regs.get(v, "")) if regs else ARegType()

    block = Block(arg_types=[type_of(v) for v, _ in program.inputs])
    values: dict[int, SSAValue] = {v: arg for (v, _), arg in zip(program.inputs, block.args, strict=True)}
    for instr in program.instrs:
        cls = MACRO_OPS[instr.macro]
        op = cls(
            [values[o] for o in instr.operands],
            instr.directions,
            [type_of(r) for r in instr.results],
            instr.scratch or None,
        )
        block.add_op(op)
        values.update(zip(instr.results, op.results, strict=True))
    block.add_op(OutputOp([values[v] for v, _ in program.outputs]))
    counts = {**info.counts, "macros": program.macros, "icws": program.icws}
    return KernelOp(replace(info, counts=counts), Region(block))


def kernel_from_program(program: Program, filter: Filter) -> KernelOp:
    """The kernel op of a search's plan (SSA) or of an allocated program, for `filter`."""
    return build_kernel(program, KernelInfo.from_filter(filter))


def program_from_kernel(op: KernelOp) -> tuple[Program, KernelInfo]:
    """The macro program of a kernel op (registers filled when its values are allocated)."""
    info = op.info()
    if op.is_bus_level:
        raise CainError(f"kernel @{info.name} is at bus level (after expand-bus): it has no macro program")
    numbers: dict[SSAValue, int] = {}
    for arg in op.block.args:
        numbers[arg] = len(numbers)
    instrs = []
    for inner in op.block.ops:
        if isinstance(inner, MacroOp):
            for r in inner.results:
                numbers[r] = len(numbers)
            instrs.append(
                Instr(
                    inner.MACRO.name,
                    tuple(numbers[r] for r in inner.results),
                    tuple(numbers[o] for o in inner.operands),
                    inner.direction_names,
                    inner.scratch_registers,
                )
            )
    registers = {n: register_of(v) for v, n in numbers.items()} if op.is_allocated else {}
    program = Program(
        info.name,
        [(numbers[a], r) for a, r in zip(op.block.args, info.input_registers, strict=True)],
        instrs,
        [(numbers[v], r) for v, r in zip(op.output.outs, info.output_registers, strict=True)],
        registers,
    )
    return program, info


def bus_ops_of(op: KernelOp) -> list[BusOp]:
    """The micro-ops of a kernel at bus level."""
    return [inner.bus_op() for inner in op.block.ops if isinstance(inner, BusMicroOp)]


Scamp5 = Dialect(
    "scamp5",
    [KernelOp, OutputOp, *MACRO_OPS.values(), BusOp1, Bus2Op, Bus3Op],
    [ARegType],
)
