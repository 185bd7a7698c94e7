"""The instruction table against the bus semantics and the tables of reference/scamp5.md."""

import itertools
import random

import pytest

from cain.backend.sim import GOAL_ALGEBRA, SimulationError, run_bus
from cain.model.goal import Goal
from cain.model.isa import DIRECTIONS, INSTRUCTION_SETS, MACROS, expand, instruction_set

# reference/scamp5.md section 4: the constraints column (all other pairs may share a register)
CONSTRAINTS = {
    "res": set(),
    "res2": {("y0", "y1")},
    "mov": set(),
    "movx": set(),
    "mov2x": set(),
    "add": {("x0", "x1")},
    "add3": {("x0", "x1"), ("x0", "x2"), ("x1", "x2")},
    "addx": {("x0", "x1")},
    "add2x": {("x0", "x1")},
    "sub": {("x1", "y")},
    "subx": {("x1", "y")},
    "sub2x": {("x1", "y")},
    "neg": {("x0", "y")},
    "divq": {("x0", "y")},
    "div": {("s0", "x0"), ("s0", "y"), ("x0", "y")},
    # the reference says "distinct"; s1 may be x0's own register (x0 is then re-formed: the `div` form)
    "div4": {(a, b) for a, b in itertools.combinations(sorted(["y", "s0", "s1", "x0"]), 2)} - {("s1", "x0")},
    "diva": {("s0", "s1"), ("s0", "y"), ("s1", "y")},
}
ICWS = {"res": 2, "res2": 3, "div": 5, "div4": 5, "diva": 5}
SDK = {"div4": "div", "add3": "add", "res2": "res"}


def random_goal(rng: random.Random) -> Goal:
    """A goal with even counts (so it can be halved), over two channels."""
    return Goal(
        {
            (rng.randint(-2, 2), rng.randint(-2, 2), rng.randint(0, 1)): 2 * rng.randint(-3, 3)
            for _ in range(4)
        }
    )


def run_macro(name: str, assignment: dict[str, str], goals: dict[str, Goal], directions: tuple[str, ...]):
    """Execute a macro's expansion on goals; `assignment` maps roles to registers, `goals` registers to goals."""
    state = {r: Goal({(0, 0, 100 + k): 1}) for k, r in enumerate("ABCDEF")}  # garbage everywhere
    state["NEWS"] = Goal({(0, 0, 99): 1})
    state.update(goals)
    return run_bus(expand(MACROS[name], assignment, directions), state, GOAL_ALGEBRA)


def roles_of(name: str) -> list[str]:
    m = MACROS[name]
    return list(dict.fromkeys(m.results + m.operands + m.scratch))


@pytest.mark.parametrize("name", sorted(MACROS))
def test_expansion_computes_the_meaning_for_every_direction(name):
    m = MACROS[name]
    rng = random.Random(name)
    tied = dict(m.tied)
    for directions in itertools.product(DIRECTIONS, repeat=m.directions):
        for _ in range(5):
            operand_goals = tuple(random_goal(rng) for _ in m.operands)
            roles = [r for r in roles_of(name) if r not in tied]
            assignment = dict(zip(roles, "ABCDEF"))
            for result, operand in m.tied:
                assignment[result] = assignment[operand]
            goals = {assignment[x]: g for x, g in zip(m.operands, operand_goals)}
            state = run_macro(name, assignment, goals, directions)
            want = m.apply(operand_goals, directions)
            for y in m.results:
                assert state[assignment[y]] == want, (name, directions, y)
            if not m.clobbers_operands:
                for x, g in zip(m.operands, operand_goals):
                    assert state[assignment[x]] == g, f"{name} must keep operand {x}"


@pytest.mark.parametrize("name", sorted(MACROS))
def test_derived_constraints_match_the_reference_table(name):
    assert set(MACROS[name].distinct_roles) == CONSTRAINTS[name]


@pytest.mark.parametrize("name", sorted(MACROS))
def test_constraints_are_necessary_and_sufficient(name):
    """Sharing a register between two roles works exactly when the table allows it."""
    m = MACROS[name]
    rng = random.Random(f"share {name}")
    tied = dict(m.tied)
    roles = [r for r in roles_of(name) if r not in tied]
    directions = tuple(rng.choice(list(DIRECTIONS)) for _ in range(m.directions))
    for a, b in itertools.combinations(roles, 2):
        if a in m.scratch or b in m.scratch or (a in m.results and b in m.results):
            continue  # scratch registers hold nothing worth sharing; two results are two registers
        assignment = dict(zip(roles, "ABCDEF"))
        assignment[b] = assignment[a]
        for result, operand in m.tied:
            assignment[result] = assignment[operand]
        shared = rng.choice([random_goal(rng) for _ in range(3)])
        operand_goals = tuple(shared if x in (a, b) else random_goal(rng) for x in m.operands)
        goals = {assignment[x]: g for x, g in zip(m.operands, operand_goals)}
        try:
            state = run_macro(name, assignment, goals, directions)
            want = m.apply(operand_goals, directions)
            ok = all(state[assignment[y]] == want for y in m.results)
        except SimulationError:
            ok = False
        assert ok == ((min(a, b), max(a, b)) not in CONSTRAINTS[name]), (name, a, b)


def test_instruction_sets_match_the_reference():
    assert INSTRUCTION_SETS["basic"] == {"res", "mov", "movx", "add", "sub", "neg", "divq"}
    assert INSTRUCTION_SETS["all"] == set(MACROS) - {"divq"}
    assert set(instruction_set("basic")) == INSTRUCTION_SETS["basic"]
    with pytest.raises(ValueError, match="unknown instruction set 'fast'"):
        instruction_set("fast")


@pytest.mark.parametrize("name", sorted(MACROS))
def test_costs_and_sdk_spelling(name):
    m = MACROS[name]
    assert m.icws == ICWS.get(name, 2)
    roles = {r: r.upper() for r in roles_of(name)}
    call = m.sdk_call(roles, ("north", "east")[: m.directions])
    assert call.startswith(SDK.get(name, name) + "(")
    in_place = {x for _, x in m.tied}
    assert all(roles[r] in call for r in roles if r not in in_place)
