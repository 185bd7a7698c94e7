"""What a search is asked to do (`SearchConfig`) and what it reports (`SearchResult`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cain.diagnostics import CainError
from cain.model.filter import Filter
from cain.model.isa import MicroOp
from cain.model.program import Program
from cain.search.budget import Stopped

TRAVERSALS = ("cgds", "dfs", "bfs", "best-first", "discrepancy")
COSTS = ("macros", "icws")
HEURISTICS = ("scamp5", "random")
DEFAULT_TIME = 10.0
DEFAULT_MAX_MEMORY = 4 << 30
"""Bytes of resident memory a search may use (all its processes together) before it stops with its best
program: well below the 16-32 GB of a workstation, far above what a 60 s search of a 5x5 kernel needs."""
MAX_ATOMS = 20_000
"""Most atoms (the sum of the kernels' absolute counts) a filter may have: past it the search refuses
before starting (each count is a weight times 2^depth, so a lower depth shrinks it)."""
PORTFOLIO_RESTART = 1000
"""Nodes before the first restart of the portfolio's odd-numbered workers: restarts find the shared
structure of the combined Gaussians far sooner, and cost a little on kernels without such structure, so
one worker of two restarts and the other does not."""


@dataclass(frozen=True)
class SearchConfig:
    """How to search: instruction set, register file, budgets, determinism and traversal."""

    instruction_set: str = "all"
    registers: int | tuple[str, ...] | None = None
    node_budget: int | None = None
    time_budget: float | None = None
    seed: int = 0
    workers: int = 1
    traversal: str = "cgds"
    cost: str = "macros"
    """`macros`, or `icws`: plans are scored by their ICWs after bus-level synthesis
    (cain.backend.bus_synth), the search itself still ordered and bounded by macros."""
    score: Callable[[Program], int | None] | None = None
    """Under `cost=icws`: the ICWs of a plan (SSA) at the level it runs at, None when it cannot run there
    (the digital plane's lowering, `cain.search.digital`), and then the plan is dropped as it is found, so that
    it bounds nothing (a plan that does not fit the DREG file must not cut off longer ones that do; on a time
    budget within `cain.search.heuristic.worker.OFFER_SHARE`). None: bus-level synthesis scores plans."""
    heuristic: str = "scamp5"
    progress: bool | None = None
    branch: int = 40
    """Children kept per node (the cheapest by the heuristic)."""
    exhaustive_atoms: int = 6
    """Goals with at most this many atoms are split every possible way; bigger ones by the cheaper
    atom-distance generator."""
    scaled_relations: int = 0
    """Also split goals along halved (1, 2, ... times) copies of the other goals of the bag."""
    scaled_patterns: bool = False
    """The heuristic counts goals equal up to translation and a power-of-two scale as one pattern."""
    kernel_repeats: bool = False
    """Each kernel's add3s of a repeated sub-pattern, its moved copy and the rest are all offered, in the
    tier before other new goals (`cain.search.goals.space.Space.triples`): Cain-Java's order."""
    repeats_nodes: int = 300
    """Nodes of a first search with `kernel_repeats`, whose plan bounds the search that follows: it finds
    edge kernels' rows and diagonals, and loses on kernels whose repeats are chance. 0: none (nor under a
    node budget below ten times this)."""
    macros: tuple[str, ...] | None = None
    """Use only these macros of the instruction set (None: all of them)."""
    restart: int = 0
    """Start the traversal again after this many nodes, each round 1.5 times longer and its order
    jittered by a new seed; the best plan bounds every round. 0: worker 0 never restarts, and the
    portfolio's odd-numbered workers restart every `PORTFOLIO_RESTART` nodes."""
    restart_jitter: float = 0.25
    """The relative jitter of the heuristic in rounds after the first."""
    restart_from_plan: bool = False
    """Every second round after the first starts from a goal-bag on the best plan's path, chosen at random,
    instead of the final goals: the plan's last steps are kept and the way to their goal-bag is searched
    anew (a large-neighbourhood search around the best plan), while the other rounds diversify. Off by
    default: it did not shorten the suite, and fewer rounds from the final goals cost Table 1's both
    Gaussians 4 macros (benchmarks/README.md)."""
    cache_limit: int = 3_000_000
    """Most goal-bags remembered for culling; the cache is emptied when it grows past this."""
    frontier_limit: int = 600_000
    """Most candidate children the frontier's nodes hold (they are most of a search's memory); past it,
    a node put back on the frontier keeps only its next `frontier_keep` children."""
    frontier_keep: int = 3
    exact: bool = False
    """Search for a shortest program of the goal model and prove it (`cain.search.exact.deepening`): iterative
    deepening from the lower bound, within the node or time budget, after a short heuristic search. With
    `cost=icws`, a shortest bus micro-op program instead (`cain.search.exact.bus`)."""
    exact_reach: int = 8
    """Without `exact`, in macros: when the heuristic's first plan (`engine.EXACT_PROBE` nodes) has at most
    this many macros, the heuristic gets an eighth of the rest of the budget (`engine.HEURISTIC_SHARE`) and
    the exact search the rest: at that size it finds shorter programs than the heuristic
    and proves how close they are to optimal; above it, on a time budget, the last tenth goes to shortening
    stretches of the plan (`cain.search.exact.window`). 0: the heuristic alone, neither."""
    cp_sat: bool = True
    """In the exact search (in macros): CP-SAT (`cain.search.exact.sat`, when OR-Tools is installed) looks
    for shorter programs that cancel atoms, which the goal model leaves out, and refutes lengths for every
    program, raising the lower bound."""
    max_memory: int | None = DEFAULT_MAX_MEMORY
    """Bytes of resident memory the search may use (all workers together); past it, it first empties its
    caches and then stops with its best program. None: no limit."""
    max_atoms: int = MAX_ATOMS
    """Most atoms a filter may have for the search to start (a clear error past it)."""
    fallback: bool = True
    """Also build the constructive program (`cain.search.constructive.program`) and return it when the search
    has no program or a longer one."""
    compare_constructive: bool = True
    """With `fallback`, build the constructive program after a search that has a plan too (false: only after
    one that has none)."""
    structure_nodes: int = 500
    """For a kernel that is a convolution of small kernels (binomial, box, separable): nodes for the search
    of what is left once the factors are taken out (`cain.search.heuristic.structure`), whose plan followed by
    the factors' chain is the first plan and the bound of the search. 0: do not look for factors."""
    kernel_by_kernel: float = 0.1
    """For a filter of several kernels: the share of the budget (nodes or time) that worker 0 first spends
    compiling the kernels one at a time (`cain.search.heuristic.kernel_by_kernel`): a quick first plan and a
    bound for the simultaneous search. 0: never."""

    @property
    def only(self) -> frozenset[str] | None:
        """`macros` as the searches take it (None: the whole instruction set)."""
        return frozenset(self.macros) if self.macros is not None else None


@dataclass(frozen=True)
class PlanEvent:
    """One improvement of the best plan: when it was found and how long it is."""

    nodes: int
    seconds: float
    macros: int
    icws: int
    bus_icws: int = 0
    """ICWs after bus-level synthesis (`cost=icws` only; 0 when not measured)."""
    bus2: int = 0
    """Of those, the `bus2`/`bus3` micro-ops (the noisiest)."""


@dataclass
class SearchResult:
    """The best verified plan (register-allocated, and as SSA in `plan`) and how the search went."""

    program: Program | None
    events: list[PlanEvent] = field(default_factory=list)
    nodes: int = 0
    seconds: float = 0.0
    peak_memory: int = 0
    stopped: Stopped = Stopped.EXHAUSTED
    """Why the search ended: `time`, `nodes`, `optimal`, `exhausted` (no candidates left), or `impossible`
    (not run: no program of the goal model fits the registers, `cain.search.exact.full`; a constructive
    program, which may cancel atoms, still can)."""
    plan: Program | None = None
    """The best plan as the search built it: SSA values, no registers (what the search pass emits)."""
    kernel_by_kernel: bool = False
    """The plan was found kernel by kernel, the simultaneous search having found none shorter."""
    lower_bound: int = 0
    """No program of the instruction set computing the filter has fewer macros (`cain.search.exact.bound`)."""
    model_bound: int = 0
    """No program of the goal model (instructions split atoms, never cancel them) has fewer macros: the
    exact search's proof where it ran, else `lower_bound`."""
    optimal: bool = False
    """The program has `model_bound` macros: proven shortest in the goal model."""
    constructive: bool = False
    """The program is the constructive fallback's (shorter than the search's, or the search had none)."""
    finish_seconds: float = 0.0
    """Time after the search itself: verifying its program, and building, allocating and verifying the
    constructive one."""
    registers_needed: int | None = None
    """When there is no program: the fewest registers the constructive fallback needs (None: not known)."""
    bus_ops: list[MicroOp] | None = None
    """`exact` with `cost=icws`: the shortest verified micro-op program found (`cain.search.exact.bus`)."""
    icw_bound: int = 0
    """`exact` with `cost=icws`: no program of the bus-level model has fewer micro-ops (proven)."""


def memory_size(value: int | str) -> int:
    """Bytes from `4G`, `512M`, `64k` or a plain number of bytes; a clear error otherwise."""
    text = str(value).strip()
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    number, unit = text.rstrip("kKmMgGtTbB"), text[len(text.rstrip("kKmMgGtTbB")) :].upper().rstrip("B")
    try:
        size = float(number) * units[unit]
    except (ValueError, KeyError):
        raise CainError(
            f"search: max-memory takes a size such as 4G, 512M or a byte count, not '{value}'"
        ) from None
    if size < 1 << 20:
        raise CainError(f"search: max-memory {value} is too small (at least 1M)")
    return int(size)


def check_budgets(nodes: int | None, seconds: float | None, workers: int, prefix: str = "") -> None:
    """A clear error for a node budget, time budget (NaN included) or worker count no search can run on."""
    if workers < 1:
        raise CainError(f"{prefix}workers must be at least 1, not {workers}")
    if nodes is not None and nodes < 1:
        raise CainError(f"{prefix}the node budget must be positive, not {nodes}")
    if seconds is not None and not seconds > 0:
        raise CainError(f"{prefix}the time budget must be positive, not {seconds:g} s")


def register_names(filt: Filter, cfg: SearchConfig) -> tuple[str, ...]:
    """The register names to allocate; a clear error for an invalid configuration."""
    if cfg.traversal not in TRAVERSALS:
        raise CainError(f"search: unknown traversal '{cfg.traversal}' (choose from {', '.join(TRAVERSALS)})")
    if cfg.cost not in COSTS:
        raise CainError(f"search: unknown cost '{cfg.cost}' (choose from {', '.join(COSTS)})")
    if cfg.heuristic not in HEURISTICS:
        raise CainError(f"search: unknown heuristic '{cfg.heuristic}' (choose from {', '.join(HEURISTICS)})")
    if cfg.instruction_set not in ("all", "basic"):
        raise CainError(f"search: unknown instruction set '{cfg.instruction_set}' (choose from all, basic)")
    check_budgets(cfg.node_budget, cfg.time_budget, cfg.workers, "search: ")
    if cfg.max_memory is not None and cfg.max_memory <= 0:
        raise CainError(f"search: the memory limit must be positive, not {cfg.max_memory}")
    regs = cfg.registers
    if regs is None:
        names = tuple(filt.registers)
    elif isinstance(regs, int):
        if regs < 1:
            raise CainError(f"search: the register count must be positive, not {regs}")
        names = tuple(filt.registers[:regs]) + tuple(f"R{i}" for i in range(len(filt.registers), regs))
    else:
        names = tuple(regs)
    pinned = {r for _, r in filt.inputs} | {k.register for k in filt.kernels}
    missing = sorted(pinned - set(names))
    if missing:
        raise CainError(
            f"search: register(s) {', '.join(missing)} hold inputs or outputs but are not in the register file "
            f"{', '.join(names)}; add them or use more registers"
        )
    return names
