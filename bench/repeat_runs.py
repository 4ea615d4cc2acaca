"""Flakes: the whole suite, every group, run again and again on the correct example stores.

A correct store must pass every time: a scenario that fails or errors on one of them even once is
a flake (timing-sensitive groups, concurrency, expiry and faults, are what this watches). Each run
is the runner end to end in a subprocess with its defaults (two workers, the private server) and
``--groups all``; the runs of the stores are interleaved, so that machine noise falls on all alike.
It prints every unexpected outcome with its message, the count of them, and each store's median
run time, and exits 1 if there was any.

    python bench/repeat_runs.py [--runs 20] [--store SPEC ...]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN_TIMEOUT_S = 600
from example_stores import EXAMPLE_STORES as STORES  # noqa: E402  (bench/, the script's directory)
EXPECTED = {"passed", "skipped"}


def one_run(args: list[str], reports: Path) -> tuple[float, list[str], int]:
    """Run the runner once; return its wall time, its unexpected outcomes and its scenario count."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "entrypoint.py"), "--groups", "all", "--report-dir",
                           str(reports), *args], cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    wall = time.perf_counter() - started
    try:
        summary = json.loads((reports / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return wall, [f"no summary.json ({exc}); exit status {done.returncode}: {done.stderr[-500:]}"], 0
    unexpected = [f"{result['nodeid']}: {result['outcome']}: {result['message']}"
                  for result in summary["results"] if result["outcome"] not in EXPECTED]
    if summary["status"] != "passed" and not unexpected:
        unexpected.append(f"run status {summary['status']}: {summary['message']}")
    return wall, unexpected, len(summary["results"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--store", action="append", default=[],
                        help="a store spec to repeat instead of the examples (repeatable)")
    options = parser.parse_args()
    stores = {spec: ["--store", spec] for spec in options.store} or STORES
    walls: dict[str, list[float]] = {name: [] for name in stores}
    scenarios: dict[str, int] = {}
    unexpected: list[str] = []
    with tempfile.TemporaryDirectory() as workdir:
        for run in range(1, options.runs + 1):
            for name, args in stores.items():
                wall, found, count = one_run(args, Path(workdir) / "reports")
                walls[name].append(wall)
                scenarios[name] = max(scenarios.get(name, 0), count)
                unexpected += [f"run {run}, {name}: {line}" for line in found]
                print(f"run {run}/{options.runs} {name}: {wall:.1f} s, {count} scenarios, "
                      f"{len(found)} unexpected", flush=True)
    print()
    for line in unexpected:
        print(line)
    total = sum(len(w) for w in walls.values())
    print(f"{len(unexpected)} unexpected outcomes in {total} runs of the whole suite ({options.runs} per store)")
    for name in stores:
        print(f"  {name}: {scenarios[name]} scenarios, median run {statistics.median(walls[name]):.1f} s")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
