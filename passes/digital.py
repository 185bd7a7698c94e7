"""`digital`: compile each filter of goal IR for the digital (DREG) plane in one step, `digital-plan` then
`lower-dreg`: plans of the shared reverse search for its integer kernels, ranked by their ICWs once lowered
to DREG words, allocated on the DREG file and verified bit for bit (`cain.search.digital`); the fewest
ICWs replaces the filter as a `dreg.kernel`."""

from __future__ import annotations

from dataclasses import dataclass

from cain.passes.digital_plan import DigitalPlanPass

from cain.backend.digital import DigitalProgram, kernel_op
from cain.model.dreg import Encoding
from cain.model.filter import Filter


@dataclass(frozen=True)
class DigitalPass(DigitalPlanPass):
    """Replace every goal filter by its verified digital kernel (the options are `digital-plan`'s)."""

    name = "digital"

    def result(self, program: DigitalProgram, filt: Filter, encoding: Encoding):
        return kernel_op(program)
