"""The `dreg` dialect: a SCAMP-5 kernel on the digital plane, one op per DREG instruction word.

The ops are made from the one word table (`cain.model.dreg.WORDS`), so an instruction added there is an op
here. Registers are names (the words run after allocation), printed as string arrays:

    dreg.kernel "box" attributes {inputs = ["A: R5 R6"], outputs = ["A: R7 R6 unsigned"]} {
      dreg.CLR ["R1", "R2", "R3", "R4"], []
      dreg.NOR ["R7"], ["R5", "R6"]
    }
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.ir import Block, Dialect, Region
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, region_def, traits_def
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

from cain.model.dreg import DREGS, WORDS, Word, check_word
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
        return Word(self.name.removeprefix("dreg."), tuple(d.data for d in self.dests), tuple(s.data for s in self.srcs))

    def verify_(self) -> None:
        word = self.word()
        extra = tuple(r for r in (*word.dests, *word.srcs) if r not in DREGS and r.startswith("R"))
        try:
            check_word(word, DREGS + extra)
        except SimulationError as e:
            raise VerifyException(str(e)) from None


WORD_OPS: dict[str, type[WordOp]] = {
    kind: irdl_op_definition(type(f"{kind.title()}Op", (WordOp,), {"name": f"dreg.{kind}"}))
    for kind in WORDS
}


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A straight-line digital kernel: its words, and where its inputs and outputs are, bit 0 first."""

    name = "dreg.kernel"

    sym_name = prop_def(StringAttr)
    inputs = prop_def(ArrayAttr[StringAttr])
    outputs = prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = "$sym_name `inputs` $inputs `outputs` $outputs attr-dict-with-keyword $body"

    def __init__(self, name: str, inputs: Sequence[str], outputs: Sequence[str], words: Sequence[Word]):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "inputs": ArrayAttr([StringAttr(i) for i in inputs]),
                "outputs": ArrayAttr([StringAttr(o) for o in outputs]),
            },
            regions=[Region([])],
        )

        self.body.add_block(Block([WORD_OPS[w.kind](w.dests, w.srcs) for w in words]))

    def words(self) -> list[Word]:
        return [op.word() for op in self.body.block.ops if isinstance(op, WordOp)]


DregDialect = Dialect("dreg", [KernelOp, *WORD_OPS.values()], [])
