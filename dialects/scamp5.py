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
One op per macro of `cain.model.isa.MACROS`, generated from the table. Registers are types: `!scamp5.areg`
before allocation, `!scamp5.areg<A>` after; once allocated, each op's verifier enforces the bus rules
(`Macro.distinct_roles`, `tied`, `scratch`). After `expand-bus` the kernel body holds `scamp5.bus`,
`scamp5.bus2`, `scamp5.bus3` micro-ops on named registers (`scamp5.bus NEWS, A, B`: the first
destinations, then sources, as the SDK writes them) and `scamp5.output` has no operands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import ClassVar

from cain.dialects.goal import (
    GoalAttr,
    RationalAttr,
    WeightsAttr,
    encoding_attr,
    encoding_of,
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

from cain.model.filter import Filter, Kernel
from cain.model.isa import (
    BUS_KINDS,
    DIRECTIONS,
    MACROS,
    NEIGHBOUR_SIDE,
    NEWS,
    Macro,
    MicroOp,
    SimulationError,
    check_bus,
)

# -- registers as types -----------------------------------------------------------------------------


@irdl_attr_definition
class ARegType(ParametrizedAttribute, TypeAttribute):
    """An analogue register: `!scamp5.areg` (not yet allocated) or `!scamp5.areg<A>`."""

    name = "scamp5.areg"

    register: StringAttr

    def __init__(self, register: str):
        super().__init__(StringAttr(register))

    @classmethod
    def unallocated(cls) -> ARegType:
        """A register not yet chosen (before regalloc)."""
        return cls("")

    @property
    def is_allocated(self) -> bool:
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
        types = list(result_types) if result_types is not None else [ARegType.unallocated()] * len(self.MACRO.results)
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
        allocated = [t.is_allocated for t in types]  # type: ignore[attr-defined]
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
    def of(op: MicroOp) -> BusMicroOp:
        """The op of a `cain.model.isa.MicroOp`, of the class its kind names."""
        return BUS_OPS[op.kind](op.dests, op.srcs)

    def micro_op(self) -> MicroOp:
        """The micro-op as a `cain.model.isa.MicroOp`, for the simulator and the C printer."""
        return MicroOp(self.KIND, tuple(d.data for d in self.dests), tuple(s.data for s in self.srcs))

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
        op = self.micro_op()
        printer.print_string(" " + ", ".join(op.dests + op.srcs))
        if self.attributes:
            printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        try:
            check_bus(self.micro_op())
        except SimulationError as e:
            raise VerifyException(str(e)) from None


@irdl_op_definition
class BusOp(BusMicroOp):
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


BUS_OPS: dict[str, type[BusMicroOp]] = {"bus": BusOp, "bus2": Bus2Op, "bus3": Bus3Op}


# -- kernel -----------------------------------------------------------------------------------------


@irdl_op_definition
class OutputOp(IRDLOperation):
    """Ends a kernel: its output values in output order (none at bus level, where the kernel's output
    registers say where the outputs are)."""

    name = "scamp5.output"

    outs = var_operand_def(ARegType)
    traits = traits_def(IsTerminator())
    assembly_format = "($outs^ `:` type($outs))? attr-dict"

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(values)])


def _strings(values: Iterable[str]) -> ArrayAttr[StringAttr]:
    return ArrayAttr(StringAttr(v) for v in values)


def _data(values: ArrayAttr) -> list:
    """The plain values of an array attribute's elements."""
    return [v.data for v in values]


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

    def __init__(self, filter: Filter, body: Region, counts: Mapping[str, int] | None = None):
        super().__init__(
            properties={
                "sym_name": StringAttr(filter.name),
                "input_channels": _strings(c for c, _ in filter.inputs),
                "input_registers": _strings(r for _, r in filter.inputs),
                "output_names": _strings(k.name for k in filter.kernels),
                "output_registers": _strings(k.register for k in filter.kernels),
                "goals": ArrayAttr(GoalAttr(k.goal) for k in filter.kernels),
                "errors": ArrayAttr(RationalAttr(Fraction(k.error)) for k in filter.kernels),
                "weights": ArrayAttr(WeightsAttr(k.weights) for k in filter.kernels),
                "depth": IntAttr(filter.depth),
                "registers": _strings(filter.registers),
                "instruction_set": StringAttr(filter.instruction_set),
            },
            regions=[body],
        )
        for key, value in (counts or {}).items():
            self.attributes[key] = IntegerAttr(value, i64)
        if filter.encoding is not None:
            self.attributes["digital"] = encoding_attr(filter.encoding)

    @property
    def filter(self) -> Filter:
        """The filter the kernel computes, read back from its header."""
        inputs = tuple(zip(_data(self.input_channels), _data(self.input_registers), strict=True))
        kernels = tuple(
            Kernel(*fields)
            for fields in zip(
                _data(self.output_names),
                _data(self.output_registers),
                _data(self.weights),
                _data(self.goals),
                _data(self.errors),
                strict=True,
            )
        )
        return Filter(
            self.sym_name.data,
            inputs,
            kernels,
            self.depth.data,
            tuple(_data(self.registers)),
            self.instruction_set.data,
            encoding_of(self.attributes),
        )

    @property
    def counts(self) -> dict[str, int]:
        """The kernel's integer attributes (`macros`, `icws`)."""
        return {k: v.value.data for k, v in self.attributes.items() if isinstance(v, IntegerAttr)}

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
        f = self.filter
        printer.print_string(" ")
        printer.print_symbol_name(f.name)
        printer.print_string("(")
        printer.print_list(self.block.args, printer.print_block_argument)
        printer.print_string(") ")
        print_settings(f.depth, f.registers, f.instruction_set, printer)
        printer.print_string(" inputs [")
        printer.print_list(
            f.inputs,
            lambda cr: (
                printer.print_string_literal(cr[0]),
                printer.print_string(" -> "),
                printer.print_string_literal(cr[1]),
            ),
        )
        printer.print_string("] outputs [")

        def print_output(k: Kernel) -> None:
            printer.print_string("(")
            printer.print_string_literal(k.name)
            printer.print_string(" -> ")
            printer.print_string_literal(k.register)
            printer.print_string(" ")
            print_goal_and_error(k.goal, k.error, printer)
            printer.print_string(" weights ")
            print_weights(k.weights, printer)
            printer.print_string(")")

        if len(f.kernels) == 1:
            print_output(f.kernels[0])
        else:  # one output per line
            with printer.indented(2):
                for i, k in enumerate(f.kernels):
                    printer.print_string("\n" if i == 0 else ",\n")
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
        op = cls(filt, body)
        if attributes is not None:
            op.attributes |= attributes.data
        return op

    def verify_(self) -> None:
        name = self.sym_name.data
        if self.depth.data < 0:
            raise VerifyException(f"kernel @{name}: depth must be at least 0, not {self.depth.data}")
        if len(self.input_channels) != len(self.input_registers) or len(self.block.args) != len(
            self.input_channels
        ):
            raise VerifyException(f"kernel @{name}: one block argument and one register per input channel")
        n = len(self.output_names)
        if not (len(self.output_registers) == len(self.goals) == len(self.errors) == len(self.weights) == n):
            raise VerifyException(
                f"kernel @{name}: every output needs a name, register, goal, error and weights"
            )
        filt = self.filter
        outputs = [k.register for k in filt.kernels]
        if len(set(outputs)) != n:
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
        for arg, (_, reg) in zip(self.block.args, filt.inputs, strict=True):
            r = register_of(arg)
            if r and r != reg:
                raise VerifyException(f"kernel @{name}: input {arg.index} arrives in register {reg}, not {r}")
        for v, k in zip(outs, filt.kernels, strict=False):
            r = register_of(v)
            if r and r != k.register:
                raise VerifyException(
                    f"kernel @{name}: output '{k.name}' must end in register {k.register}, but its value is in {r}"
                )
        file = set(filt.registers)
        for kind, pinned in (("input", [r for _, r in filt.inputs]), ("output", outputs)):
            for reg in pinned:
                if reg not in file:
                    raise VerifyException(
                        f"kernel @{name}: {kind} register {reg} is not in the register file ({', '.join(filt.registers)})"
                    )
        for op in self.block.ops:
            used = [register_of(v) for v in (*op.results, *op.operands)]
            if isinstance(op, MacroOp):
                used += op.scratch_registers
            if isinstance(op, BusMicroOp):
                micro = op.micro_op()
                used += [r for r in micro.dests + micro.srcs if r != NEWS and r not in NEIGHBOUR_SIDE]
            for reg in used:
                if reg and reg not in file:
                    raise VerifyException(
                        f"kernel @{name}: {op.name} uses register {reg}, which is not in the register file "
                        f"({', '.join(filt.registers)})"
                    )
            if not isinstance(op, (MacroOp, BusMicroOp, OutputOp)):
                raise VerifyException(f"kernel @{name}: {op.name} is not a scamp5 instruction")
            if bus and isinstance(op, MacroOp):
                raise VerifyException(f"kernel @{name}: macros and bus micro-ops cannot be mixed ({op.name})")


Scamp5Dialect = Dialect(
    "scamp5",
    [KernelOp, OutputOp, *MACRO_OPS.values(), BusOp, Bus2Op, Bus3Op],
    [ARegType],
)
