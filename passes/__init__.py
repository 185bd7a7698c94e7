"""Cain's passes, one module each, named as on the command line, and its output target (C): what
`cain-opt`, the library and xDSL's universe find, listed as xDSL's `get_all_passes` and
`get_all_targets` list its own."""

from collections.abc import Callable

from cain.passes.bus_synth import BusSynthPass
from cain.passes.convert_linalg_to_goal import ConvertLinalgToGoalPass
from cain.passes.digital import DigitalPass
from cain.passes.digital_plan import DigitalPlanPass
from cain.passes.expand_bus import ExpandBusPass
from cain.passes.lower_dreg import LowerDregPass
from cain.passes.regalloc import RegallocPass
from cain.passes.search import SearchPass
from cain.passes.verify import VerifyPass
from xdsl.passes import ModulePass
from xdsl.utils.target import Target

from cain.backend.emit_c import CTarget

PASSES: tuple[type[ModulePass], ...] = (
    ConvertLinalgToGoalPass,
    SearchPass,
    RegallocPass,
    ExpandBusPass,
    BusSynthPass,
    VerifyPass,
    DigitalPass,
    DigitalPlanPass,
    LowerDregPass,
)
"""Cain's passes, in pipeline order."""

TARGETS: tuple[type[Target], ...] = (CTarget,)
"""Cain's output targets (besides xDSL's `mlir`, the IR)."""

EMIT = "emit"
"""A pipeline's last step that prints the C: `-p ...,emit{OPTIONS}` is `-p ... -t c{OPTIONS}`."""


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Cain's passes by name."""
    return {cls.name: _factory(cls) for cls in PASSES}


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    """Cain's output targets by name."""
    return {cls.name: _factory(cls) for cls in TARGETS}


def _factory(cls: type) -> Callable[[], type]:
    """`() -> cls`, taking no parameter at all: xDSL tells a target's factory from an old-style printer
    `(module, output)` by its signature."""
    return lambda: cls
