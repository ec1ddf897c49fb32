"""Mutation score of GA-1's reference timing rule and hazard replay, with mutmut.

mutmut (https://github.com/boxed/mutmut) makes every small mutant it knows of (operators,
comparisons, constants, arguments dropped, calls replaced by None, ...) in the modules named, and
runs the tests that reach each mutated function; a mutant is killed when a test fails. This
complements tests/simcore/test_mutations.py, whose mutants are chosen by hand (the chapter's
eleven and this project's) and must all be caught: here every mutant counts, so the score shows
what the tests leave unchecked, and the survivors are listed to read.

It runs in a temporary copy of simcore and the tests (mutmut rewrites the copy, never the
working tree), beside a link to the chapter's listings so the differential tests run too. The
modules mutated are the readable reference (`simcore/ga1/timing.py`, `simcore/ga1/hazards.py`),
which the compiled engine is held to by the differential tests. The engine's kernels are not
mutated here: mutmut puts a dispatching trampoline into every function, which numba cannot
compile, and run uncompiled, every mutant would cost a Python run of the chapter's checks; the
hand-chosen mutants of test_mutations.py cover the engine.

Needs mutmut (`pip install -e '.[mutation]'`). Prints the score per module (killed over killed
plus survived), the CPU time of the run (this process's children) and the surviving mutants
(`mutmut show NAME` in the copy kept by --keep shows one).

Measured with mutmut 3.8.1 (`python -m benchmarks.testsuite.bench_mutation`, 200 s of CPU, 5 minutes on
two shared cores): timing.py 243 mutants, 182 killed, 51 survived, 10 reached by no test
(`Timing.mxu_util`), 78.1%; hazards.py 77 mutants, 66 killed, 11 survived, 85.7%. Most survivors
are equivalent (`>` for `>=` where equal times change nothing, initial values always
overwritten, a dtype); the others show what these tests leave unchecked: the engines' busy
totals, a program whose last instruction is a product, and the slot, start and earliest of a
"write too early" hazard.

Usage: python -m benchmarks.testsuite.bench_mutation [--module simcore/ga1/timing.py ...] [--keep]
"""

from __future__ import annotations

import json
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT

SHARED = ROOT.parent / "shared"  # the chapter's listings, for the differential tests
MODULES = ("simcore/ga1/timing.py", "simcore/ga1/hazards.py")
# Tests that reach the reference timing rule and replay in seconds (test_engine.py, the engine
# against the reference, takes half a minute: too slow to run once per mutant).
TESTS = (
    "tests/simcore/test_chapter_checks.py",
    "tests/simcore/test_simcore_units.py",
    "tests/simcore/test_differential.py",
    "tests/simcore/test_golden.py",
    "tests/simcore/test_asm.py",
)
RESULT = re.compile(r"^\s*(?P<module>[\w.]+)\.x\w*__mutmut_\d+: (?P<status>.+)$")


def prepare(workdir: Path, modules: tuple[str, ...]) -> Path:
    """A copy of simcore, the tests and pyproject.toml with a [tool.mutmut] table of its own."""
    project = workdir / "project"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    for part in ("simcore", "tests"):
        shutil.copytree(ROOT / part, project / part, ignore=skip)
    if SHARED.is_dir():
        (workdir / "shared").symlink_to(SHARED)  # the copy's tests look for ../shared
    table = "\n".join(
        [
            "",
            "[tool.mutmut]",
            'source_paths = ["simcore"]',
            f"only_mutate = {json.dumps(list(modules))}",
            f"pytest_add_cli_args_test_selection = {json.dumps(list(TESTS))}",
            'pytest_add_cli_args = ["-x", "-q", "-p", "no:cacheprovider"]',
            "",
        ]
    )
    text = (ROOT / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(text + table)
    return project


def mutmut(project: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "mutmut", *args],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(
            f"mutmut {' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return done.stdout


def statuses(results: str) -> dict[str, Counter[str]]:
    """{module: Counter(status)} from `mutmut results --all true`."""
    by_module: dict[str, Counter[str]] = defaultdict(Counter)
    for line in results.splitlines():
        found = RESULT.match(line)
        if found:
            by_module[found["module"]][found["status"].strip()] += 1
    return by_module


def report(
    by_module: dict[str, Counter[str]], survivors: list[str], cpu: float, wall: float
) -> None:
    print(f"{'module':<24} {'mutants':>7} {'killed':>7} {'survived':>8} {'other':>6} {'score':>6}")
    for module, count in sorted(by_module.items()):
        total, killed, survived = sum(count.values()), count["killed"], count["survived"]
        other = total - killed - survived
        score = killed / max(killed + survived, 1)
        print(f"{module:<24} {total:>7} {killed:>7} {survived:>8} {other:>6} {score:>6.1%}")
    print(f"CPU time {cpu:.0f} s (mutmut and its test runs), wall time {wall:.0f} s")
    print("survivors:")
    for name in survivors:
        print(f"  {name}")


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__)  # --quick: prepares the mutated copy, runs no mutant
    parser.add_argument("--module", action="append", help="a module to mutate (default: both)")
    parser.add_argument("--keep", action="store_true", help="keep the copy (to `mutmut show`)")
    args = parser.parse_args(argv)
    modules = tuple(args.module or MODULES)
    try:
        import mutmut as _  # noqa: F401 - only to say how to get it
    except ImportError:
        return harness.skip("mutmut is not installed: pip install -e '.[mutation]'")
    workdir = Path(tempfile.mkdtemp(prefix="bench_mutation_"))
    try:
        project = prepare(workdir, modules)
        if args.quick:
            print(f"--quick: the copy to mutate is ready ({', '.join(modules)}); no mutant run")
            return 0
        started = time.perf_counter()
        mutmut(project, "run")
        wall = time.perf_counter() - started
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        results = mutmut(project, "results", "--all", "true")
        survivors = [
            line.split(":")[0].strip() for line in results.splitlines() if "survived" in line
        ]
        report(statuses(results), survivors, cpu.ru_utime + cpu.ru_stime, wall)
        if args.keep:
            print(f"the copy: {project}")
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    harness.run(main)
