"""Benchmark: this checkout's default run against another revision's, side by side in one run.

The other revision is checked out in a temporary git worktree; both runners are run end to end on
the same example store, alternately (which of the two goes first changes every round, so the
machine's drift falls on both alike), each with its default workers. Prints each one's median wall
time, their ratio, and each scenario group's median cost.

    python bench/compare_revisions.py --base HEAD~3 [--runs 7] [--store "count window"]
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_default_run import timed_run  # noqa: E402  (bench/, the script's directory)
from example_stores import EXAMPLE_STORES  # noqa: E402


def worktree(revision: str, into: Path) -> Path:
    """``revision`` checked out at ``into``; its suite importable as memory_regression.suite, as an
    installed package has it (the editable install maps that name to this checkout's suite/)."""
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(into), revision], cwd=ROOT, check=True)
    (into / "memory_regression" / "suite").symlink_to("../suite")
    return into


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the revision to compare with (a commit, a branch, HEAD~1)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--store", default="count window", choices=sorted(EXAMPLE_STORES))
    options = parser.parse_args()
    args = EXAMPLE_STORES[options.store]
    base = Path(tempfile.mkdtemp(prefix="memory-regression-base-")) / "tree"
    worktree(options.base, base)
    trees = {f"base ({options.base})": base, "this checkout": ROOT}
    walls: dict[str, list[float]] = {name: [] for name in trees}
    groups: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    try:
        for round_ in range(options.runs):
            for name in (list(trees) if round_ % 2 == 0 else list(reversed(trees))):
                wall, _scenarios, costs = timed_run(args, tree=trees[name])
                walls[name].append(wall)
                for group, cost in costs.items():
                    groups[name].setdefault(group, []).append(cost)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=False)
        shutil.rmtree(base.parent, ignore_errors=True)
    medians = {name: statistics.median(values) for name, values in walls.items()}
    for name, median in medians.items():
        print(f"{name:<28} median {median:6.2f} s   runs: {', '.join(f'{w:.2f}' for w in walls[name])}")
    first, second = medians.values()
    print(f"ratio (this checkout / base): {second / first:.2f}")
    print()
    print(f"{'group':<16}" + "".join(f"{name:>30}" for name in trees))
    for group in sorted({g for costs in groups.values() for g in costs}):
        print(f"{group:<16}" + "".join(f"{statistics.median(groups[name].get(group, [0.0])):>29.2f}s"
                                       for name in trees))
    print(f"(median of {options.runs} runs each, {options.store} example store, each revision's default workers; "
          "group costs: the scenarios' durations summed)")


if __name__ == "__main__":
    main()
