"""`emit`: print the kernels as C/C++ for the SCAMP-5d SDK instead of IR.

The pass verifies each kernel, renders it (cain.backend.emit_c) and stores the text on the module; cain-opt
then writes that text, not the IR, to stdout or `-o FILE` (`emitted_text`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from cain.backend.convert import kernels_of
from cain.backend.emit_c import emit_module, foreign_registers
from cain.backend.verify import ensure_verified
from cain.diagnostics import CainError

C_TEXT = "scamp5.c_text"
"""The module attribute holding the emitted C."""


@dataclass(frozen=True)
class EmitPass(ModulePass):
    """Print C/C++ for the SCAMP-5d SDK (macro level, or bus level after expand-bus)."""

    name = "emit"

    verify: bool = True
    """Verify each kernel before printing it, unless an earlier pass of this run verified it
    (`verify=false` to skip)."""
    strict: bool = False
    """Refuse a kernel that uses registers SCAMP-5d lacks (beyond A..F) instead of printing it for a
    hypothetical device with a warning."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = kernels_of(op, "emit", allocated=True)
        for kernel in kernels:
            if self.verify:
                ensure_verified(kernel, images=1, size=32)
            foreign = foreign_registers(kernel)
            if foreign and self.strict:
                raise CainError(
                    f"emit: kernel @{kernel.sym_name.data} uses register(s) {', '.join(foreign)}, which SCAMP-5d "
                    f"lacks (it has A..F); compile with registers A..F (option registers = A B C D E F)"
                )
            if foreign:
                sys.stderr.write(
                    f"emit: warning: kernel @{kernel.sym_name.data} uses register(s) {', '.join(foreign)}, which "
                    f"SCAMP-5d lacks: the C is for a hypothetical device (emit{{strict=true}} refuses it)\n"
                )
        op.attributes[C_TEXT] = StringAttr(emit_module(kernels))


def emitted_text(module: ModuleOp) -> str | None:
    """The C text the emit pass stored on `module`, if it ran."""
    text = module.attributes.get(C_TEXT)
    return text.data if isinstance(text, StringAttr) else None
