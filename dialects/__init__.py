"""Cain's xDSL dialects: `goal` (filters as integer goals), `scamp5` (macro and bus operations) and `dreg`
(digital-plane words), listed
by `get_all_dialects` as xDSL lists its own; `register_dialects` loads them into a context."""

import re
from collections.abc import Callable

from cain.dialects.dreg import DregDialect
from cain.dialects.goal import GoalDialect
from cain.dialects.scamp5 import Scamp5Dialect
from cain.dialects.tosa import TosaDialect
from xdsl.context import Context
from xdsl.dialects import get_all_dialects as get_xdsl_dialects
from xdsl.dialects.builtin import Builtin
from xdsl.ir import Dialect
from xdsl.utils.mlir_lexer import MLIRLexer

DIALECTS: tuple[Dialect, ...] = (GoalDialect, Scamp5Dialect, DregDialect)

# xDSL 0.74's lexer matches a string literal by a repeat inside a repeat, `"(?:[^"...]+|\\...)*"`, which
# backtracks exponentially on a quote left open before a long line (a mangled IR file hung `cain-opt`).
# The same strings, each character matched once:
MLIRLexer._unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Cain's dialects by name."""
    return {dialect.name: (lambda dialect=dialect: dialect) for dialect in DIALECTS}


def register_dialects(ctx: Context) -> Context:
    """Cain's dialects, and xDSL's (loaded when used) for models from other pipelines, with `tosa`
    extended by `tosa.conv2d`."""
    for name, dialect in get_xdsl_dialects().items():
        if name not in ("builtin", TosaDialect.name):
            ctx.register_dialect(name, dialect)
    for dialect in (Builtin, TosaDialect, *DIALECTS):
        ctx.load_dialect(dialect)
    return ctx
