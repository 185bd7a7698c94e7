"""The goal dialect: lossless conversion to and from `Filter`, printing and parsing, verifiers."""

from dataclasses import replace
from fractions import Fraction as F
from io import StringIO
from pathlib import Path

import pytest
from cain.dialects.goal import (
    FilterOp,
    GoalAttr,
    GoalDialect,
    InputOp,
    KernelOp,
    RationalAttr,
    WeightsAttr,
    filter_from_op,
    filter_to_op,
)
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from cain.frontend.kernel import parse_filter
from cain.model.filter import Filter, Kernel
from cain.model.goal import Goal

EXAMPLES = Path(__file__).parents[2] / "examples"


def context() -> Context:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(GoalDialect)
    return ctx


def show(op, generic: bool = False) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(op)
    return out.getvalue()


def parse_module(text: str) -> ModuleOp:
    return Parser(context(), text).parse_module()


def example_filters() -> list[Filter]:
    return [parse_filter(p.read_text(), str(p)) for p in sorted(EXAMPLES.glob("*.cain"))]


@pytest.mark.parametrize("generic", [False, True])
def test_examples_round_trip_through_text(generic):
    for f in example_filters():
        module = ModuleOp([filter_to_op(f)])
        module.verify()
        text = show(module, generic)
        parsed = parse_module(text)
        parsed.verify()
        assert show(parsed, generic) == text
        (op,) = parsed.ops
        assert filter_from_op(op) == f


def test_filter_round_trip_keeps_everything():
    f = Filter(
        name="odd shapes",
        inputs=(("red", "C"), ("green", "A")),
        kernels=(Kernel("wide", "B", (((F(1, 3), F(-1, 2)),), ((F(0),), (F(5, 4),))), Goal(), F(0)),),
        depth=2,
        registers=("A", "B", "C"),
        instruction_set="basic",
    )
    from cain.model.approx import approximate_kernel

    goal, error = approximate_kernel(f.kernels[0].weights, f.depth)
    f = replace(f, kernels=(replace(f.kernels[0], goal=goal, error=error),))
    op = filter_to_op(f)
    op.verify()
    assert filter_from_op(op) == f
    reparsed = parse_module(show(ModuleOp([op.clone()])))
    assert filter_from_op(next(iter(reparsed.ops))) == f


def test_attributes_print_and_parse():
    ctx = context()
    for attr, text in [
        (
            GoalAttr(Goal({(1, 1, 0): 2, (0, 0, 1): -1})),
            "#goal.goal<[[0, 0, 2], [0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0, -1, 0], [0, 0, 0]]>",
        ),
        (RationalAttr(F(-3, 32)), "#goal.rational<-3/32>"),
        (RationalAttr(F(7)), "#goal.rational<7>"),
        (WeightsAttr((((F(1, 2), F(-1, 4)),), ((F(3),),))), "#goal.weights<1/4 [[2, -1]], [[12]]>"),
        (WeightsAttr((((F(2), F(0)), (F(1), F(1))),)), "#goal.weights<[[2, 0], [1, 1]]>"),
    ]:
        out = StringIO()
        Printer(stream=out).print_attribute(attr)
        assert out.getvalue() == text
        assert Parser(ctx, text).parse_attribute() == attr


def make_filter(**changes) -> FilterOp:
    """gauss3x3 as an op, with `changes` applied to its fields."""
    f = parse_filter((EXAMPLES / "gauss3x3.cain").read_text(), "gauss3x3.cain")
    return filter_to_op(replace(f, **changes))


def kernel(name="blur", register="A", weights=None, goal=None, error=F(0)) -> Kernel:
    weights = weights or (((F(1, 2),),),)
    return Kernel(name, register, weights, Goal({(0, 0, 0): 1}) if goal is None else goal, error)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"depth": -1}, "depth must be at least 0"),
        ({"registers": ()}, "register file is empty"),
        ({"registers": ("A", "B", "A")}, "listed twice"),
        ({"registers": ("B", "C")}, "register 'A' is not in the register file"),
        ({"instruction_set": "fancy"}, "unknown instruction set 'fancy'"),
        ({"inputs": ()}, "has no goal.input"),
        ({"kernels": ()}, "has no goal.kernel"),
        ({"inputs": (("x", "A"), ("x", "B"))}, "input channel 'x' appears twice"),
        ({"inputs": (("x", "A"), ("y", "A"))}, "input register 'A' appears twice"),
        ({"kernels": (kernel(), kernel(register="B"))}, "kernel name 'blur' appears twice"),
        ({"kernels": (kernel(), kernel("b"))}, "output register 'A' appears twice"),
        ({"depth": 1, "kernels": (kernel(goal=Goal({(0, 0, 0): 2})),)}, "rounded to the nearest it is #goal.goal<[[1]]>"),
        (
            {"depth": 1, "kernels": (kernel(error=F(1, 2)),)},
            "has error 1/2 but its goal is off its weights by 0",
        ),
        ({"depth": 1, "kernels": (kernel(weights=(((F(1, 2),),), ((F(1),),))),)}, "weights for 2 channels"),
        ({"depth": 1, "kernels": (kernel(error=F(-1)),)}, "negative error"),
        ({"depth": 1, "kernels": (kernel(goal=Goal()),)}, "empty goal"),
    ],
)
def test_verifier_rejects(changes, message):
    op = make_filter(**changes)
    with pytest.raises(VerifyException, match=message.replace("[", r"\[").replace("]", r"\]")):
        op.verify()


def test_verifier_accepts_gauss():
    make_filter().verify()
    make_filter(depth=1, kernels=(kernel(),)).verify()


def test_input_and_kernel_need_a_filter():
    with pytest.raises(VerifyException, match="directly inside a goal.filter"):
        ModuleOp([InputOp("A", "A")]).verify()
    with pytest.raises(VerifyException, match="directly inside a goal.filter"):
        ModuleOp([KernelOp("k", "A", (((F(1),),),), Goal({(0, 0, 0): 1}), F(0))]).verify()


def test_filter_body_holds_only_inputs_and_kernels():
    op = make_filter()
    op.body.block.add_op(ModuleOp([]))
    with pytest.raises(VerifyException, match="only goal.input and goal.kernel"):
        op.verify()
