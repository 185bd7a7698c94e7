"""Cain's dialects, passes and C target for plain `xdsl-opt`, found through the `xdsl.universe` entry point."""

from xdsl.universe import Universe

from cain.dialects import get_all_dialects
from cain.passes import get_all_passes, get_all_targets

CAIN_UNIVERSE = Universe(
    all_dialects=get_all_dialects(),
    all_passes=get_all_passes(),
    all_targets=get_all_targets(),
)
