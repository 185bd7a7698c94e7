"""The last kernel formed over an input (cain.search.over_input): certificates and the programs they give."""

from __future__ import annotations

import pytest

from benchmarks.common import Budget
from benchmarks.fuzz import CASES_DIR, compile_case
from cain.frontend.kernel import parse_filter
from cain.search.constructive import over_input

pytestmark = pytest.mark.skipif(over_input.fmpz_mat is None, reason="python-flint is not installed")

# four kernels of two channels in five registers: the constructive program alone needs six
CASE = CASES_DIR / "fuzz_3_159.cain"
HOPELESS = CASES_DIR / "fuzz_0_30.cain"


def _times(a: dict, b: dict) -> dict:
    out: dict = {}
    for (ax, ay), ca in a.items():
        for (bx, by), cb in b.items():
            out[(ax + bx, ay + by)] = out.get((ax + bx, ay + by), 0) + ca * cb
    return out


def _plus(a: dict, b: dict, k: int = 1) -> dict:
    out = dict(a)
    for p, c in b.items():
        out[p] = out.get(p, 0) + k * c
    return {p: c for p, c in out.items() if c}


@pytest.mark.slow
def test_a_certificate_is_an_identity_of_polynomials():
    """The certificate found says what it claims, channel by channel: the last kernel is ±m·2^e plus the
    others times g in the overwritten channel, and 2^e·F plus the others times g in every other one."""
    filt = parse_filter(CASE.read_text(), CASE.name)
    polys = over_input._polys(filt)
    found = 0
    for last in range(len(filt.kernels)):
        for channel in range(len(filt.inputs)):
            for scale in sorted(over_input.scales(polys, last, channel, filt.depth)):
                cert = over_input.certificate(polys, last, channel, scale)
                if cert is None:
                    continue
                found += 1
                sign, m, g, F = cert
                for z in range(len(filt.inputs)):
                    made = {m: sign * 2**scale} if z == channel else {p: 2**scale * c for p, c in F[z].items()}
                    for j, poly in g.items():
                        made = _plus(made, _times(poly, dict(polys[j][z])))
                    assert made == _plus({}, dict(polys[last][z])), (last, channel, scale, z)
    assert found


def test_the_last_kernel_formed_over_an_input_verifies(tmp_path):
    """A filter the constructive program needs six registers for compiles in five, and the program read
    back from the IR computes every kernel (symbolically and on random images)."""
    outcome = compile_case(CASE.read_text(), Budget(nodes=20), tmp_path)
    assert outcome.outcome == "passed", outcome.message


@pytest.mark.slow
def test_without_a_certificate_the_error_still_says_what_to_change(tmp_path):
    outcome = compile_case(HOPELESS.read_text(), Budget(nodes=20), tmp_path)
    assert outcome.outcome == "no program", outcome.message
    assert "allow 6 registers" in outcome.message
