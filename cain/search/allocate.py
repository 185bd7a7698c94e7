"""Plans made programs: register-allocated on a register file, and verified against the filter."""

from __future__ import annotations

from cain.backend.regalloc import allocate
from cain.backend.verify import verify_program
from cain.diagnostics import CainError
from cain.model.filter import Filter
from cain.model.program import Program


def allocated(program: Program, names: tuple[str, ...]) -> Program | None:
    """The plan register-allocated on `names`, or None when it does not fit them. The search's plans are
    verified once, when the search returns its best (`cain.search.engine.search`): verifying each as it is
    found took a second on a big filter, past the end of a time budget."""
    try:
        return allocate(program, names)
    except CainError:
        return None


def allocated_and_verified(program: Program, filt: Filter, names: tuple[str, ...]) -> Program | None:
    """The plan register-allocated and verified, or None when allocation fails."""
    program = allocated(program, names)
    if program is not None:
        verify(program, filt)
    return program


def verify(program: Program, filt: Filter) -> None:
    """Raise unless the allocated `program` computes `filt`'s kernels (`verify_program`)."""
    verify_program(program, filt.initial_goals(), filt.final_goals(), filt.depth)
