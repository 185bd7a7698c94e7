"""The `dreg` dialect: a SCAMP-5 kernel on the digital plane, one op per DREG instruction word.

The ops are made from the one word table (`cain.model.dreg.WORDS`), so an instruction added there is an op
here. Registers are names (the words run after allocation), printed as string arrays. The kernel carries what
checking it needs: where its inputs and outputs are (bit 0 first), the integer goal of each output, the
fixed width (`bits`, when values wrap), the depth its kernels were approximated at, and the macros of the
plan it was lowered from:

    dreg.kernel "box" inputs ["A: R5 R6"] outputs ["B: R7 R6 unsigned"] attributes {depth = 0 : i64,
        goals = [#goal.goal<[[0, 0, 0], [0, 1, 1], [0, 0, 0]]>], bits = 2 : i64, macros = 2 : i64} {
      dreg.CLR ["R1", "R2", "R3", "R4"], []
      dreg.NOR ["R7"], ["R5", "R6"]
    }
"""

from __future__ import annotations

from collections.abc import Sequence

from cain.dialects.goal import GoalAttr
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import Block, Dialect, Region
from xdsl.irdl import (
    IRDLOperation,
    attr_def,
    irdl_op_definition,
    opt_attr_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

from cain.model.dreg import DREGS, WORDS, Word, check_word
from cain.model.goal import Goal
from cain.model.isa import SimulationError


class WordOp(IRDLOperation):
    """One DREG instruction word: its destinations and sources."""

    dests = prop_def(ArrayAttr[StringAttr])
    srcs = prop_def(ArrayAttr[StringAttr])
    assembly_format = "$dests `,` $srcs attr-dict"

    def __init__(self, dests: Sequence[str], srcs: Sequence[str] = ()):
        super().__init__(
            properties={
                "dests": ArrayAttr([StringAttr(d) for d in dests]),
                "srcs": ArrayAttr([StringAttr(s) for s in srcs]),
            }
        )

    def word(self) -> Word:
        return Word(
            self.name.removeprefix("dreg."),
            tuple(d.data for d in self.dests),
            tuple(s.data for s in self.srcs),
        )

    def verify_(self) -> None:
        word = self.word()
        extra = tuple(r for r in (*word.dests, *word.srcs) if r not in DREGS and r.startswith("R"))
        try:
            check_word(word, DREGS + extra)
        except SimulationError as e:
            raise VerifyException(str(e)) from None


WORD_OPS: dict[str, type[WordOp]] = {
    kind: irdl_op_definition(type(f"{kind.title()}Op", (WordOp,), {"name": f"dreg.{kind}"})) for kind in WORDS
}


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A straight-line digital kernel: its words, where its inputs and outputs are (bit 0 first), and what
    its outputs must hold."""

    name = "dreg.kernel"

    sym_name = prop_def(StringAttr)
    inputs = prop_def(ArrayAttr[StringAttr])
    outputs = prop_def(ArrayAttr[StringAttr])
    goals = attr_def(ArrayAttr[GoalAttr])
    depth = attr_def(IntegerAttr)
    bits = opt_attr_def(IntegerAttr)
    macros = attr_def(IntegerAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = "$sym_name `inputs` $inputs `outputs` $outputs attr-dict-with-keyword $body"

    def __init__(
        self,
        name: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        words: Sequence[Word],
        goals: Sequence[Goal],
        depth: int = 0,
        bits: int | None = None,
        macros: int = 0,
    ):
        attributes = {
            "goals": ArrayAttr([GoalAttr(g) for g in goals]),
            "depth": IntegerAttr(depth, i64),
            "macros": IntegerAttr(macros, i64),
        }
        if bits is not None:
            attributes["bits"] = IntegerAttr(bits, i64)
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "inputs": ArrayAttr([StringAttr(i) for i in inputs]),
                "outputs": ArrayAttr([StringAttr(o) for o in outputs]),
            },
            attributes=attributes,
            regions=[Region([])],
        )

        self.body.add_block(Block([WORD_OPS[w.kind](w.dests, w.srcs) for w in words]))

    def words(self) -> list[Word]:
        return [op.word() for op in self.body.block.ops if isinstance(op, WordOp)]

    def input_dregs(self) -> list[tuple[str, tuple[str, ...]]]:
        """(channel, DREGs bit 0 first) of each input, from `"A: R5 R6"`."""
        return [(name, regs) for name, regs in map(_entry, self.inputs.data)]

    def output_dregs(self) -> list[tuple[str, tuple[str, ...], bool]]:
        """(kernel, DREGs bit 0 first, signed) of each output, from `"N: R7 R8 unsigned"`."""
        out = []
        for name, fields in map(_entry, self.outputs.data):
            if not fields or fields[-1] not in ("signed", "unsigned"):
                raise VerifyException(f"dreg.kernel: output '{name}' must end in 'signed' or 'unsigned'")
            out.append((name, fields[:-1], fields[-1] == "signed"))
        return out

    def verify_(self) -> None:
        self.input_dregs()
        if len(self.output_dregs()) != len(self.goals.data):
            raise VerifyException(
                f"dreg.kernel: {len(self.outputs.data)} outputs but {len(self.goals.data)} goals"
            )


def _entry(text: StringAttr) -> tuple[str, tuple[str, ...]]:
    name, colon, fields = text.data.partition(":")
    if not colon or not name.strip():
        raise VerifyException(f"dreg.kernel: '{text.data}' is not 'NAME: DREG ...'")
    return name.strip(), tuple(fields.split())


DregDialect = Dialect("dreg", [KernelOp, *WORD_OPS.values()], [])
