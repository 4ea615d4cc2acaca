"""Benchmark: the default matrix against the example stores on a private redis-server.

For each example store it runs the runner end to end in a subprocess RUNS times, with the default
three worker processes, with two (``-n 2``), with one (``-n 1``) and with the scenarios in the runner
itself (``-n 0``), interleaved so that machine noise falls on all four alike (median wall time, scenarios per
second); then once in this process (``-n 0``) with redis-py's send and receive timed, to give the
share of the run spent waiting on Redis. Last, each scenario group's cost (its scenarios' durations
summed), which is what ``--groups`` and the default set are chosen by.

    python bench/bench_default_run.py [--runs 5]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from example_stores import EXAMPLE_STORES as STORES  # noqa: E402  (bench/, the script's directory)


WORKERS = {"3 workers (default)": [], "2 workers": ["-n", "2"], "1 worker": ["-n", "1"], "in the runner": ["-n", "0"]}


def timed_run(args, extra=(), tree=ROOT):
    """One end-to-end run of the runner of ``tree`` (a checkout: this one, or another revision's
    worktree): its wall time, the number of scenarios, and each group's cost (its scenarios'
    durations summed: worker time, which the workers share)."""
    with tempfile.TemporaryDirectory() as reports:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, str(tree / "entrypoint.py"), "--report-dir", reports, *args, "--",
                               *extra], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                              capture_output=True, text=True, timeout=300)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"run failed ({done.returncode}):\n{done.stdout[-3000:]}")
        summary = json.loads((Path(reports) / "summary.json").read_text())
    costs: dict[str, float] = {}
    for result in summary["results"]:
        costs[result["group"]] = costs.get(result["group"], 0.0) + (result["duration_s"] or 0.0)
    return wall, summary["totals"]["total"], costs


def end_to_end(args, runs):
    """Median wall time of each way of running, the number of scenarios, and each group's median cost."""
    walls: dict[str, list[float]] = {name: [] for name in WORKERS}
    groups: dict[str, list[float]] = {}
    scenarios = 0
    for _ in range(runs):
        for name, extra in WORKERS.items():
            wall, scenarios, costs = timed_run(args, extra)
            walls[name].append(wall)
            for group, cost in costs.items():
                groups.setdefault(group, []).append(cost)
    return ({name: statistics.median(values) for name, values in walls.items()}, scenarios,
            {group: statistics.median(values) for group, values in groups.items()})


def redis_share(args):
    """Run once in-process with redis-py's socket work timed; return (waiting, wall) seconds."""
    import redis.connection
    import redis.asyncio.connection
    from memory_regression import cli

    waited = [0.0]

    def timed(cls, name, is_async=False):
        original = getattr(cls, name)
        if is_async:
            async def wrapper(self, *a, **k):
                started = time.perf_counter()
                try:
                    return await original(self, *a, **k)
                finally:
                    waited[0] += time.perf_counter() - started
        else:
            def wrapper(self, *a, **k):
                started = time.perf_counter()
                try:
                    return original(self, *a, **k)
                finally:
                    waited[0] += time.perf_counter() - started
        setattr(cls, name, wrapper)

    for name in ("send_packed_command", "read_response", "connect"):
        timed(redis.connection.AbstractConnection, name)
        timed(redis.asyncio.connection.AbstractConnection, name, is_async=True)
    with tempfile.TemporaryDirectory() as reports:
        started = time.perf_counter()
        code = cli.main(["--report-dir", reports, *args, "--", "-q", "-n", "0"])
        wall = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"in-process run failed with {code}")
    return waited[0], wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--in-process", metavar="NAME", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.in_process:  # a child run, so that each store's timing starts from a clean process
        waited, wall = redis_share(STORES[options.in_process])
        print(json.dumps({"waited": waited, "wall": wall}))
        return
    print(f"{'store':<14}{'scenarios':>10}" + "".join(f"{name:>22}" for name in WORKERS)
          + f"{'scenarios/s':>13}{'redis share':>13}")
    group_costs = {}
    for name, args in STORES.items():
        walls, scenarios, group_costs[name] = end_to_end(args, options.runs)
        child = subprocess.run([sys.executable, __file__, "--in-process", name], cwd=ROOT,
                               capture_output=True, text=True, timeout=300)
        timing = json.loads(child.stdout.strip().splitlines()[-1])
        share = timing["waited"] / timing["wall"]
        default = walls[next(iter(WORKERS))]
        print(f"{name:<14}{scenarios:>10}" + "".join(f"{walls[w]:>21.2f}s" for w in WORKERS)
              + f"{scenarios / default:>13.1f}{share:>12.0%}")
    print(f"(median wall time of {options.runs} end-to-end runs each; scenarios/s of the default; redis share "
          "from one run in this process: time in redis-py send/receive/connect over the run's wall time)")
    print()
    print(f"{'group':<16}" + "".join(f"{name:>16}" for name in STORES))
    for group in sorted({g for costs in group_costs.values() for g in costs}):
        print(f"{group:<16}" + "".join(f"{group_costs[name].get(group, 0.0):>15.2f}s" for name in STORES))
    print("(each group's scenarios' durations summed, median over all runs of a store: worker time, "
          "which the workers share)")


if __name__ == "__main__":
    main()
