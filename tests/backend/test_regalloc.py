"""Register allocation: pinned registers, in-place reuse, division forms, moves, and failure."""

import random
from fractions import Fraction

import pytest
from handwritten import GAUSS3_GOAL, gauss3_all, gauss3_basic

from cain.backend.regalloc import RegisterAllocationError, allocate
from cain.backend.verify import verify_program
from cain.model.goal import Goal
from cain.model.isa import DIRECTIONS, MACROS
from cain.model.program import Instr, Program


def regs_of(p: Program, instr: Instr) -> tuple[list[str], list[str]]:
    return [p.registers[r] for r in instr.results], [p.registers[o] for o in instr.operands]


def test_in_place_reuse_and_pinned_output_without_moves():
    p = allocate(gauss3_basic())
    assert p.macros == 12 and p.outputs[0][1] == "A" and p.registers[p.outputs[0][0]] == "A"
    add = p.instrs[5]
    results, operands = regs_of(p, add)
    assert add.macro == "add" and results[0] in operands  # add(B, C, B)
    assert len(set(p.registers.values())) == 3  # A, the result and one scratch/shift register
    verify_program(p, [Goal.identity(16)], [GAUSS3_GOAL], 4)


def test_output_computed_directly_into_its_register():
    p = allocate(gauss3_all())
    assert p.macros == 11  # no mov
    assert p.registers[p.outputs[0][0]] == "B" and p.outputs[0][1] == "B"
    verify_program(p, [Goal.identity(16)], [GAUSS3_GOAL], 4)


def test_pinned_input_register_is_honoured():
    program = gauss3_basic()
    program.inputs = [(0, "D")]
    p = allocate(program)
    first = p.instrs[0]
    assert regs_of(p, first)[1] == ["D"]
    verify_program(p, [Goal.identity(16)], [GAUSS3_GOAL], 4)


def test_division_forms_and_scratch():
    x = Goal.identity(4)
    # the operand stays live: div re-forms it in place, one scratch register
    keep = Program("k", [(0, "A")], [Instr("div", (1,), (0,)), Instr("add", (2,), (0, 1))], [(2, "A")])
    p = allocate(keep)
    div = p.instrs[0]
    assert div.macro == "div" and len(div.scratch) == 1
    assert div.scratch[0] not in {p.registers[0], p.registers[1]}
    verify_program(p, [x], [Goal.identity(6)], 2)
    # the operand dies and the result must end in its register: diva halves in place
    halve = Program("h", [(0, "A")], [Instr("div", (1,), (0,))], [(1, "A")])
    p = allocate(halve)
    assert p.instrs[0].macro == "diva" and p.registers[1] == "A" and len(p.instrs[0].scratch) == 2
    verify_program(p, [x], [Goal.identity(2)], 2)
    # only two registers: div needs result + scratch besides the operand, so it cannot fit
    with pytest.raises(RegisterAllocationError, match="instruction 0"):
        allocate(Program("t", [(0, "A")], [Instr("div", (1,), (0,))], [(1, "B")]), ["A", "B"])


def test_two_outputs_of_one_value_get_a_copy():
    program = Program("two", [(0, "A")], [Instr("movx", (1,), (0,), ("east",))], [(1, "B"), (1, "C")])
    p = allocate(program)
    assert p.macros == 2 and p.instrs[-1].macro == "mov"
    assert [p.registers[v] for v, _ in p.outputs] == ["B", "C"]
    g = Goal.identity(1).shifted((1, 0))
    verify_program(p, [Goal.identity(1)], [g, g], 0)


def test_outputs_that_must_swap_use_a_free_register():
    """Both values are live in each other's output register until the end."""
    program = Program(
        "swap",
        [(0, "A"), (1, "B")],
        [Instr("neg", (2,), (0,))],
        [(1, "A"), (0, "B"), (2, "C")],
    )
    p = allocate(program)
    assert p.macros == 4  # one neg, three moves through a free register
    x, y = Goal.identity(1, 0), Goal.identity(1, 1)
    verify_program(p, [x, y], [y, x, -x], 0)
    with pytest.raises(RegisterAllocationError, match="swap registers"):
        allocate(program, ["A", "B", "C"])


def test_one_value_used_twice_where_the_bus_needs_two_registers():
    program = Program("triple", [(0, "A")], [Instr("add3", (1,), (0, 0, 0))], [(1, "B")])
    p = allocate(program)
    assert [i.macro for i in p.instrs] == ["mov", "mov", "add3"]
    assert len(set(regs_of(p, p.instrs[-1])[1])) == 3
    verify_program(p, [Goal.identity(1)], [Goal.identity(3)], 0)


def spread(n: int) -> Program:
    """`n` shifted copies of the input, all live at once, then summed."""
    instrs = [
        Instr("movx", (k,), (0,), (d,))
        for k, d in zip(range(1, n + 1), ["north", "east", "south", "west"] * 3)
    ]
    acc = 1
    for k in range(2, n + 1):
        instrs.append(Instr("add", (100 + k,), (acc, k)))
        acc = 100 + k
    return Program("spread", [(0, "A")], instrs, [(acc, "A")])


# a plan the search found for the 5x5 and 3x3 Gaussians together (depth 6, input in A, outputs in A and B):
# the first scan in register-file order leaves %33 outside B; another preference order places both
GAUSS_BOTH_PLAN = [
    ("div", 1, (0,), ()),
    ("div", 2, (1,), ()),
    ("div", 3, (2,), ()),
    ("div", 4, (3,), ()),
    ("div", 5, (4,), ()),
    ("div", 6, (5,), ()),
    ("movx", 7, (6,), ("south",)),
    ("movx", 8, (6,), ("west",)),
    ("movx", 9, (6,), ("north",)),
    ("add2x", 10, (7, 9), ("north", "north")),
    ("add3", 11, (5, 7, 10), ()),
    ("add3", 12, (5, 7, 10), ()),
    ("add", 13, (8, 7), ()),
    ("mov2x", 14, (13,), ("east", "north")),
    ("add", 15, (14, 13), ()),
    ("add", 16, (4, 5), ()),
    ("add", 17, (16, 5), ()),
    ("movx", 18, (4,), ("east",)),
    ("add", 19, (5, 15), ()),
    ("movx", 20, (18,), ("north",)),
    ("add2x", 21, (12, 11), ("south", "west")),
    ("movx", 22, (19,), ("south",)),
    ("add", 23, (19, 22), ()),
    ("movx", 24, (23,), ("north",)),
    ("add2x", 25, (20, 18), ("west", "west")),
    ("add", 26, (17, 18), ()),
    ("movx", 27, (26,), ("north",)),
    ("addx", 28, (23, 24), ("west",)),
    ("mov2x", 29, (28,), ("east", "east")),
    ("addx", 30, (25, 21), ("east",)),
    ("add3", 31, (25, 27, 26), ()),
    ("movx", 32, (31,), ("south",)),
    ("add", 33, (32, 31), ()),
    ("add3", 34, (28, 29, 30), ()),
]


def test_other_preference_orders_avoid_output_moves():
    program = Program(
        "gauss5x5_3x3",
        [(0, "A")],
        [Instr(m, (r,), ops, dirs) for m, r, ops, dirs in GAUSS_BOTH_PLAN],
        [(34, "A"), (33, "B")],
    )
    p = allocate(program)
    assert p.macros == program.macros == 34
    assert [p.registers[v] for v, _ in p.outputs] == ["A", "B"]
    verify_program(p, [Goal.identity(64)], program.output_goals([Goal.identity(64)]), 6)


def test_too_many_live_values_names_the_instruction():
    with pytest.raises(RegisterAllocationError) as e:
        allocate(spread(7))
    message = str(e.value)
    assert "instruction 5 `%6 = movx %0 east`" in message
    assert "6 value(s) stay live across it" in message and "(A, B, C, D, E, F)" in message
    registers = ["A"] + [f"R{k}" for k in range(17)]  # a larger register file
    p = allocate(spread(7), registers)
    assert set(p.registers.values()) <= set(registers)


def test_unknown_pinned_register():
    with pytest.raises(RegisterAllocationError, match="not in the register file"):
        allocate(Program("p", [(0, "G")], [], [(0, "A")]))


def random_program(rng: random.Random, length: int) -> Program:
    """A random SSA program over the `all` set with at most six halvings of a 64-atom input."""
    names = sorted(n for n in MACROS if n not in ("divq",))
    live = [0]
    instrs = []
    divisions = 0
    value = 1
    for _ in range(length):
        name = rng.choice(names)
        m = MACROS[name]
        if m.scale == Fraction(1, 2):
            if divisions == 6:
                continue
            divisions += 1
        operands = tuple(rng.choice(live[-4:]) for _ in m.operands)
        directions = tuple(rng.choice(list(DIRECTIONS)) for _ in range(m.directions))
        results = tuple(range(value, value + len(m.results)))
        value += len(m.results)
        instrs.append(Instr(name, results, operands, directions))
        live.extend(results)
    outputs = [(live[-1], "B")] + ([(live[-2], "C")] if live[-2] != live[-1] else [])
    return Program("random", [(0, "A")], instrs, outputs)


def test_random_programs_allocate_to_verified_code():
    rng = random.Random(7)
    allocated = 0
    for _ in range(60):
        program = random_program(rng, rng.randint(1, 14))
        goals = program.output_goals([Goal.identity(64)])
        for registers in (None, [f"R{k}" for k in range(12)] + ["A", "B", "C"]):
            try:
                p = allocate(program, registers)
            except RegisterAllocationError:
                assert registers is None  # 15 registers always suffice for these programs
                continue
            allocated += 1
            verify_program(p, [Goal.identity(64)], goals, 6, images=1, size=24)
    assert allocated > 60
