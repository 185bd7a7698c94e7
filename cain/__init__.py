"""Cain: a compiler from convolution kernels to SCAMP-5 focal-plane sensor-processor code.

`cain.compile(source, ...)` compiles one filter (a kernel file, kernel-language text, or weights) to
verified C; `cain.compile_many(sources, ...)` a batch, in parallel. docs/api.md shows both."""

from cain.api import Batch, BatchItem, Compiled, compile, compile_filter, compile_many, read_filters
from cain.backend.sim import Noise
from cain.diagnostics import CainError

__all__ = [
    "Batch",
    "BatchItem",
    "CainError",
    "Compiled",
    "Noise",
    "compile",
    "compile_filter",
    "compile_many",
    "read_filters",
]
