"""Cain's dialects and passes for plain `xdsl-opt`, found through the `xdsl.universe` entry point."""

from xdsl.universe import Universe

from cain.cli import DIALECTS, PASSES

CAIN_UNIVERSE = Universe(
    all_dialects={dialect.name: (lambda dialect=dialect: dialect) for dialect in DIALECTS},
    all_passes={cls.name: (lambda cls=cls: cls) for cls in PASSES},
)
