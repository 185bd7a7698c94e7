"""`search`: instruction selection by the reverse goal-bag search (cain.search), goal IR -> scamp5 kernel."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

from cain.dialects.goal import FilterOp, filter_from_op
from cain.dialects.scamp5 import BusMicroOp
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cain.backend.bus_synth import counts as bus_counts
from cain.backend.convert import bus_kernel, kernel_from_program
from cain.backend.verify import remember, remember_bus
from cain.diagnostics import CainError
from cain.search import SearchConfig, search
from cain.search.config import DEFAULT_MAX_MEMORY, MAX_ATOMS, memory_size, register_names


@dataclass(frozen=True)
class SearchPass(ModulePass):
    """Find a short SCAMP-5 program for every goal.filter; replace it with a scamp5.kernel (SSA)."""

    name = "search"

    instruction_set: str | None = None
    """`all` or `basic`; default: the filter's."""
    registers: tuple[int | str, ...] | None = None
    """A register count (`registers=4`) or names (`registers=A,B,C,D`); default: the filter's."""
    budget: int | None = None
    """Stop after this many search nodes (per worker): deterministic."""
    time: int | float | None = None
    """Stop after this many seconds (default 10 when no budget is given)."""
    seed: int = 0
    """Seed of the portfolio's jittered workers (and of `heuristic=random`)."""
    workers: int = 1
    """Processes searching in parallel (a portfolio sharing the best length on a time budget)."""
    traversal: str = "cgds"
    """`cgds`, `dfs`, `bfs`, `best-first` (by the heuristic) or `discrepancy` (by the sum of the ranks of the
    children on a node's path)."""
    cost: str = "macros"
    """`macros` (the paper's cost) or `icws` (bus cycles on the device)."""
    heuristic: str = "scamp5"
    """`scamp5` (the local heuristic orders children) or `random` (a seeded random order)."""
    quiet: bool = False
    """No progress line on stderr."""
    exact: bool = False
    """Find a shortest program of the goal model and prove it (iterative deepening from the lower bound;
    small filters only): the kernel then says `optimal`. Otherwise it reports the proven bound. With
    `cost=icws`, a shortest program of bus micro-ops: the kernel is then at bus level (registers chosen)."""
    exact_reach: int = 8
    """In macros: when the heuristic's first plan (300 nodes) has at most this many macros, the heuristic
    gets half of the rest of the budget and the exact search the other half, which finds shorter programs
    of small filters and proves how close they are to optimal; 0: the heuristic alone."""
    constructive: bool = True
    """Compare the constructive program (`cain.search.constructive.program`, built in a fixed share of a time
    budget past the search's end) with the search's plan and keep the shorter; false: build it only when the
    search has no plan."""
    cp_sat: bool = True
    """In the exact search (in macros): CP-SAT first looks for shorter programs that cancel atoms and refutes
    lengths for every program (needs OR-Tools, the `exact` extra; skipped without it)."""
    max_memory: int | str | None = None
    """Stop with the best program when the search's resident memory passes this (`4G`, `512M`, bytes);
    default 4G."""
    max_atoms: int = MAX_ATOMS
    """Refuse a filter with more atoms than this (the kernels' counts, which grow as 2^depth), unless its
    kernel factors and leaves a small goal to search."""
    structure: int = 500
    """Nodes for the part of a kernel left once its small factors (binomial, box, separable) are taken out,
    whose plan followed by the factors' chain is the first plan; 0: do not look for factors."""

    def config(self, default_set: str) -> SearchConfig:
        regs = self.registers
        if regs is not None and len(regs) == 1 and isinstance(regs[0], int):
            registers: int | tuple[str, ...] | None = regs[0]
        elif regs is not None:
            if any(not isinstance(r, str) for r in regs):
                raise CainError("search: registers= takes a count (registers=4) or names (registers=A,B,C)")
            registers = tuple(regs)
        else:
            registers = None
        return SearchConfig(
            instruction_set=self.instruction_set or default_set,
            registers=registers,
            node_budget=self.budget,
            time_budget=float(self.time) if self.time is not None else None,
            seed=self.seed,
            workers=self.workers,
            traversal=self.traversal,
            cost=self.cost,
            heuristic=self.heuristic,
            progress=False if self.quiet else None,
            exact=self.exact,
            exact_reach=self.exact_reach,
            cp_sat=self.cp_sat,
            compare_constructive=self.constructive,
            max_memory=memory_size(self.max_memory) if self.max_memory is not None else DEFAULT_MAX_MEMORY,
            max_atoms=self.max_atoms,
            structure_nodes=self.structure,
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        filters = [f for f in op.walk() if isinstance(f, FilterOp)]
        if not filters:
            raise CainError("search: the input holds no goal.filter (give a .cain file or goal IR)")
        for filter_op in filters:
            filt = filter_from_op(filter_op)
            cfg = self.config(filt.instruction_set)
            result = search(filt, cfg)
            names = register_names(filt, cfg)
            if result.plan is None and result.registers_needed is not None:
                registers, inputs, outputs = len(names), len(filt.inputs), len(filt.kernels)
                why = "the search found none"
                if result.stopped == "impossible":
                    why = (
                        "each register ends holding an output, so the last output made must come from the "
                        "others alone, which none can (proven for every program whose instructions never "
                        "cancel atoms, the search's model)"
                    )
                elif inputs + outputs > registers:
                    why += (
                        f" ({inputs} inputs and {outputs} outputs: once {registers - inputs} outputs are made "
                        "every register is taken while the inputs are still read, so the last output would "
                        "have to be formed over an input, which neither the search nor the constructive "
                        "program could do here; for many such filters a program exists in theory, but Cain "
                        "cannot build it: docs/search-design.md, 'One kernel over the inputs')"
                    )
                raise CainError(
                    f"search: found no program for filter '{filt.name}' in its {registers} "
                    f"registers: {why}, and the constructive program needs "
                    f"{result.registers_needed}; allow {result.registers_needed} registers "
                    f"(`--registers` of `cain`, search{{registers={result.registers_needed}}} or `option registers`)"
                )
            if result.plan is None and result.stopped == "exhausted":
                raise CainError(
                    f"search: no program found for filter '{filt.name}': the search ran out of candidates "
                    f"before its budget; allow more registers or the 'all' instruction set"
                )
            if result.plan is None:
                limits = []
                if cfg.node_budget is not None:
                    limits.append(f"{cfg.node_budget} nodes")
                if cfg.time_budget is not None or cfg.node_budget is None:
                    limits.append(f"{cfg.time_budget or 10.0:g} s")
                alone = (
                    " (nor kernel by kernel)" if len(filt.kernels) > 1 and cfg.kernel_by_kernel > 0 else ""
                )
                raise CainError(
                    f"search: no program found for filter '{filt.name}' within {' / '.join(limits)}{alone}; "
                    f"raise the budget (search{{budget=N}} or search{{time=S}})"
                )
            if result.constructive and result.stopped == "impossible" and not self.quiet:
                sys.stderr.write(
                    f"search: no program of the search's model fits '{filt.name}' in its "
                    f"{len(names)} registers (proven: every register ends holding an output), so "
                    f"the search did not run; this program is built kernel by kernel ({result.program.macros} macros)\n"
                )
            elif result.constructive and not result.events and not self.quiet:
                sys.stderr.write(
                    f"search: no plan for '{filt.name}' within the budget ({result.stopped}); this program is "
                    f"built kernel by kernel, tap by tap ({result.program.macros} macros): raise the budget "
                    f"for a shorter one\n"
                )
            elif result.kernel_by_kernel and not result.constructive and not self.quiet:
                sys.stderr.write(
                    f"search: no plan computing the kernels of '{filt.name}' together was shorter within the "
                    f"budget; this one computes them one at a time ({result.program.macros} macros): raise the "
                    f"budget for a shorter one\n"
                )
            counts = {"lower_bound": result.lower_bound, "model_bound": result.model_bound}
            if result.optimal:
                counts["optimal"] = 1
            # the kernel carries the register file searched, which regalloc then allocates in; the search
            # verified its allocation there (`search` verifies the program it returns), which regalloc keeps
            searched = replace(filt, registers=names)
            remember(searched, result.program, result.plan)
            if result.bus_ops is not None:
                kernel = kernel_from_program(result.program, searched)
                remember_bus(searched, result.bus_ops)
                found = {**bus_counts(result.bus_ops), "icw_bound": result.icw_bound}
                kernel = bus_kernel(kernel, map(BusMicroOp.of, result.bus_ops), found)
                del kernel.attributes["macros"]
                Rewriter.replace_op(filter_op, kernel)
                continue
            Rewriter.replace_op(filter_op, kernel_from_program(result.plan, searched, counts))
