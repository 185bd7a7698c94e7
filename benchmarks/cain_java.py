"""Cain-Java, the reference implementation (github.com/ed741/cain, version 3.1), run on a suite filter.

A filter is written as a Cain-Java JSON config with the paper-era search settings (CGDS traversal,
PlanLength cost, the Threshold 10 pair generation with the Pattern heuristic, the instruction set of the
filter, the filter's register file), its kernels given as Cain's own goals at Cain's approximation depth
so that both tools compile the same integer kernels. The C Cain-Java prints is read back into a `Program`
through Cain's instruction table (each SDK call is one macro), so that its ICWs are counted, and it is
verified, exactly as Cain's own programs are.

Cain-Java is not part of this repository: `benchmarks/java/build.sh CHECKOUT` builds it from a checkout
with Debian's JDK and jars (see that script); `find_cain_java` finds the build, or says why there is none.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import Budget, Run, check_program
from cain.model.filter import Filter
from cain.model.isa import MACROS, Macro
from cain.model.program import Instr, Program

BUILD_SCRIPT = Path(__file__).resolve().parent / "java" / "build.sh"
ENVIRONMENT = "CAIN_JAVA_DIR"
"""The environment variable naming a Cain-Java checkout (or `--java DIR`)."""
JAR = "build-debian/cain-java.jar"
"""Where `build.sh` leaves the jar, inside the checkout."""
HOW_TO = (
    "fetch Cain-Java (git clone https://github.com/ed741/cain, the v3.1 code: commit 50c271f), install a JDK "
    "and Debian's jars (apt-get install default-jdk-headless libandroid-json-java libreflections-java), and "
    f"pass the checkout with --java DIR or ${ENVIRONMENT}; the jar is built by benchmarks/java/build.sh"
)

SEARCH_SETTINGS = {
    "timeOut": True,
    "traversalAlgorithm": "CGDS",
    "costFunction": "PlanLength",
    "liveCounter": False,
    "livePrintPlans": 1,
    "quiet": False,
    "initialMaxDepth": 200,
    "forcedDepthReduction": 1,
    "initialMaxCost": 2147483647,
    "forcedCostReduction": 0,
    "allowableAtomsCoefficient": 2,
    "goalReductionsPerStep": 1,
    "goalReductionsTolerance": 1,
}
"""The paper-era `runConfig` (examples/recommendedAnalogue.json of Cain-Java), less the time and workers."""
THRESHOLD = 10
"""Goals of more atoms than this get the cheap (atom distance) pair generator, the others the exhaustive."""


@dataclass(frozen=True)
class CainJava:
    """A built Cain-Java: its jar, the checkout's commit, and the JVM's heap limit."""

    jar: Path
    commit: str
    heap: str
    java: str = "java"

    def describe(self) -> dict[str, str]:
        version = subprocess.run([self.java, "-version"], capture_output=True, text=True, check=False)
        first = (version.stderr or version.stdout).strip().splitlines()[:1]
        return {
            "jar": str(self.jar),
            "commit": self.commit,
            "heap": self.heap,
            "jvm": first[0] if first else "?",
        }


def find_cain_java(checkout: Path | None, heap: str) -> CainJava | str:
    """The Cain-Java built from `checkout` (built now if its jar is missing), or why there is none."""
    if checkout is None:
        return f"no Cain-Java checkout given: {HOW_TO}"
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            return f"no `{tool}` on the PATH: {HOW_TO}"
    if not (checkout / "src/main/java/uk/co/edstow/cain/Main.java").is_file():
        return f"{checkout} is not a Cain-Java checkout: {HOW_TO}"
    jar = checkout / JAR
    if not jar.is_file():
        built = subprocess.run(
            ["sh", str(BUILD_SCRIPT), str(checkout)], capture_output=True, text=True, check=False
        )
        if built.returncode != 0 or not jar.is_file():
            return f"Cain-Java did not build: {built.stderr.strip() or built.stdout.strip()}"
    commit = jar.parent / "commit.txt"
    return CainJava(jar, commit.read_text().strip() if commit.is_file() else "unknown", heap)


# -- the filter as a Cain-Java config -------------------------------------------------------------------------


def java_config(filt: Filter, *, seconds: float, workers: int) -> dict:
    """`filt` as a Cain-Java JSON config: each kernel its goal's integer counts at depth `-filt.depth`
    (exact, so Cain-Java approximates to the same goals), the inputs in channel order, the paper-era search."""
    channels = len(filt.inputs)
    kernels = {}
    for k in filt.kernels:
        x0, x1, y0, y1 = k.goal.bounds()
        radius = max(abs(x0), abs(x1), abs(y0), abs(y1))
        matrices = k.goal.matrices(channels=channels, radius=radius)
        size = 2 * radius + 1
        array = [
            [matrices[0][r][c] if channels == 1 else [m[r][c] for m in matrices] for c in range(size)]
            for r in range(size)
        ]
        kernels[k.register] = {"depth": -filt.depth, "array": array}
    return {
        "name": filt.name,
        "target": "scamp5",
        "mode": "analogue",
        "goalSystem": "array",
        "verbose": 10,
        "3d": False,
        "maxApproximationDepth": filt.depth,
        "maxApproximationError": 0,
        "filter": kernels,
        "registerAllocator": {
            "name": "linearScan",
            "availableRegisters": list(filt.registers),
            "initialRegisters": [register for _, register in filt.inputs],
        },
        "runConfig": {"searchTime": round(seconds * 1000), "workers": workers, **SEARCH_SETTINGS},
        "pairGen": {
            "strategy": {
                "name": "Threshold",
                "threshold": THRESHOLD,
                "heuristic": {"name": "Pattern"},
                "ops": filt.instruction_set,
            },
            "outputFormat": {"name": "defaultFormat"},
        },
        "verifier": "None",
    }


# -- what Cain-Java prints --------------------------------------------------------------------------------------


@dataclass
class JavaOutput:
    """What one Cain-Java run printed: its best plan's code and length, its plans over time, its effort."""

    code: str | None
    length: int | None
    depth: int | None
    events: list[dict] = field(default_factory=list)
    nodes: int = 0


def parse_output(text: str) -> JavaOutput:
    """Read Cain-Java's standard output (the `Main` class's report of one config)."""
    blocks = text.split("/*Kernel Code!*/")
    code = None
    if len(blocks) > 1:
        end = blocks[-1].find("scamp5_kernel_end();")
        code = blocks[-1][: end if end >= 0 else None]
    length = re.findall(r"^length: (\d+) Cost:", text, re.MULTILINE)
    depth = re.search(r"^Approximation Depth\s*:\s*(-?\d+)", text, re.MULTILINE)
    events = [
        {"nodes": int(n), "seconds": int(ms) / 1000, "macros": int(length)}
        for length, ms, n in re.findall(
            r"^Plan: \d+ Cost: \S+ \(length=(\d+)\).* found at (\d+)ms after locally searching (\d+) nodes",
            text,
            re.MULTILINE,
        )
    ]
    best: list[dict] = []
    for e in sorted(events, key=lambda e: e["seconds"]):
        if not best or e["macros"] < best[-1]["macros"]:
            best.append(e)
    return JavaOutput(
        code=code,
        length=int(length[-1]) if length else None,
        depth=int(depth.group(1)) if depth else None,
        events=best,
        nodes=sum(int(n) for n in re.findall(r"NodesExpanded: (\d+)", text)),
    )


# -- its C as a Program ----------------------------------------------------------------------------------------

_CALL = re.compile(r"(\w+)\(([^()]*)\)\s*;")
_ROLE = re.compile(r"\{(\w+)\}")


def _sdk_forms() -> dict[tuple[str, int], Macro]:
    """Each macro by its SDK spelling: (function, number of arguments), from the instruction table."""
    forms: dict[tuple[str, int], Macro] = {}
    for m in MACROS.values():
        name = m.sdk.split("(")[0]
        forms[(name, len(_ROLE.findall(m.sdk)))] = m
    return forms


SDK_FORMS = _sdk_forms()


class CodeError(ValueError):
    """Cain-Java's code does not read as SCAMP-5 macros of Cain's table."""


def program_from_c(code: str, filt: Filter) -> Program:
    """The macros of SDK C code (`scamp5_kernel_begin(); ... movx(B, A, east); ...`), on SSA values with their
    registers: the filter's inputs arrive in their registers, and each kernel is read from its register at
    the end. Comments and the kernel begin / end calls are skipped."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", code, flags=re.DOTALL)
    held: dict[str, int] = {}
    registers: dict[int, str] = {}
    inputs = []
    for register in (r for _, r in filt.inputs):
        held[register] = len(registers)
        registers[held[register]] = register
        inputs.append((held[register], register))
    instrs = []
    for call in _CALL.finditer(code):
        function, text = call.group(1), call.group(2)
        if function in ("scamp5_kernel_begin", "scamp5_kernel_end"):
            continue
        args = [a.strip() for a in text.split(",")] if text.strip() else []
        macro = SDK_FORMS.get((function, len(args)))
        if macro is None:
            raise CodeError(f"`{call.group(0)}` is no macro of Cain's instruction table")
        bound = dict(zip(_ROLE.findall(macro.sdk), args, strict=True))
        tied = {operand: result for result, operand in macro.tied}
        operands = []
        for role in macro.operands:
            register = bound[role] if role in bound else bound[tied[role]]
            if register not in held:
                raise CodeError(f"`{call.group(0)}` reads {register}, which holds no value yet")
            operands.append(held[register])
        results = []
        for role in macro.results:
            value = len(registers)
            registers[value] = bound[role]
            held[bound[role]] = value
            results.append(value)
        instrs.append(
            Instr(
                macro.name,
                tuple(results),
                tuple(operands),
                tuple(bound[f"d{i}"] for i in range(macro.directions)),
                tuple(bound[s] for s in macro.scratch),
            )
        )
    outputs = []
    for k in filt.kernels:
        if k.register not in held:
            raise CodeError(f"kernel {k.name} should end in {k.register}, which the code never sets")
        outputs.append((held[k.register], k.register))
    return Program(filt.name, inputs, instrs, outputs, registers)


# -- one run ---------------------------------------------------------------------------------------------------


def resident_peak(pid: int) -> int:
    """The peak resident set of a running process in bytes (Linux's VmHWM; 0 where it cannot be read)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"^VmHWM:\s*(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) * 1024 if found else 0


@dataclass
class JavaProcess:
    """One Cain-Java JVM run: what it printed, its exit code, wall time and peak resident set (None if it
    was killed at the timeout)."""

    stdout: str
    stderr: str
    returncode: int | None
    seconds: float
    peak_memory: int | None


def run_java(tool: CainJava, config: dict, name: str, *, timeout: float) -> JavaProcess:
    """Cain-Java's `Main` on `config` (written as `name`.json in a temporary directory, its working
    directory), killed after `timeout` seconds."""
    with tempfile.TemporaryDirectory(prefix="cain-java-") as tmp:
        path = Path(tmp) / f"{name}.json"
        path.write_text(json.dumps(config))
        started = time.perf_counter()
        process = subprocess.Popen(
            [tool.java, f"-Xmx{tool.heap}", "-jar", str(tool.jar), str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp,
        )
        peak = 0
        while True:
            try:
                stdout, stderr = process.communicate(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                peak = max(peak, resident_peak(process.pid))
                if time.perf_counter() - started > timeout:
                    process.kill()
                    stdout, stderr = process.communicate()
                    return JavaProcess(stdout, stderr, None, time.perf_counter() - started, peak or None)
        return JavaProcess(stdout, stderr, process.returncode, time.perf_counter() - started, peak or None)


def java_error(done: JavaProcess) -> str:
    """The first exception line Cain-Java printed, or what is missing."""
    tail = [line for line in done.stderr.strip().splitlines() if "Exception" in line or "Error" in line]
    return (tail or ["no code printed"])[0]


def run_cain_java(tool: CainJava, name: str, filt: Filter, *, budget: Budget, workers: int) -> Run:
    """Cain-Java on `filt` for `budget` seconds with `workers` threads, in its own JVM; its best program read
    back, verified and synthesised at bus level as Cain's are (`check_program`)."""
    if budget.seconds is None:
        raise ValueError("Cain-Java takes a time budget (its searches are not deterministic in nodes)")
    config = java_config(filt, seconds=budget.seconds, workers=workers)
    timeout = 2 * budget.seconds + 120
    done = run_java(tool, config, name, timeout=timeout)
    if done.returncode is None:
        return Run(name, "failed", error=f"Cain-Java did not end within {timeout:g} s")
    out = parse_output(done.stdout)
    run = Run(
        name,
        "no plan",
        events=out.events,
        nodes=out.nodes,
        seconds=done.seconds,
        peak_memory=done.peak_memory,
        stopped="time",
    )
    if "No Solutions Found!" in done.stdout:
        return run
    if done.returncode != 0 or out.code is None:
        run.status, run.error = "failed", f"Cain-Java exited with {done.returncode}: {java_error(done)}"
        return run
    if out.depth != filt.depth:
        run.status, run.error = "failed", f"Cain-Java approximated at depth {out.depth}, Cain at {filt.depth}"
        return run
    try:
        program = program_from_c(out.code, filt)
    except CodeError as e:
        run.status, run.error = "failed", f"its code: {e}"
        return run
    check_program(run, program, filt)
    if run.ok and out.length != program.macros:
        run.error = f"note: Cain-Java reports length {out.length}, its code has {program.macros} macros"
    return run
