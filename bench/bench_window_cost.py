"""Benchmark: how a window scenario's cost grows with its window.

One run of the runner (one worker, so that the scenarios do not share a core) times the
count-window scenario on the count-window example store at N=1,000 and N=10,000; another times the
token-window scenario on the token-window example store at the 200k-token profile (claude-sonnet:
a budget of 191,808 tokens) and at a profile of a tenth of its budget. Each scenario's own time is
its duration in summary.json (the worker's start left out); the run's wall time is given beside it.
Linear cost makes the ratio 10x; the target is at most 12x, and N=10,000 under 10 s. Each run is
repeated RUNS times; the figures are medians.

    python bench/bench_window_cost.py [--runs 3]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SMALL_N, LARGE_N = 1_000, 10_000
# claude-sonnet as built in, and the same model with a tenth of its budget (19,181 of 191,808 tokens)
TOKEN_PROFILES = [
    {"name": "claude-sonnet", "context_tokens": 200_000, "reserved_output_tokens": 8_192,
     "per_message_overhead": 4, "tokenizer": "approx"},
    {"name": "claude-sonnet-tenth", "context_tokens": 20_000, "reserved_output_tokens": 819,
     "per_message_overhead": 4, "tokenizer": "approx"},
]


def timed_run(args, workdir):
    """Run the runner with ``args``; return its wall time and each scenario's duration by point."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "entrypoint.py"), "--report-dir", str(workdir / "reports"),
                           *args, "--", "-n", "1"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - started
    summary = json.loads((workdir / "reports" / "summary.json").read_text())
    if done.returncode != 0:
        raise SystemExit(f"run failed ({done.returncode}):\n{done.stdout[-3000:]}")
    return wall, {result["point"]: result["duration_s"] for result in summary["results"]}


def measure(name, args, small, large, runs, workdir):
    """Medians over ``runs`` runs of the small and the large point's durations, their ratio and the wall time."""
    walls, smalls, larges, ratios = [], [], [], []
    for _ in range(runs):
        wall, durations = timed_run(args, workdir)
        walls.append(wall)
        smalls.append(durations[small])
        larges.append(durations[large])
        ratios.append(durations[large] / durations[small])
    print(f"{name:<34}{statistics.median(smalls):>10.2f}s{statistics.median(larges):>10.2f}s"
          f"{statistics.median(ratios):>9.1f}x{statistics.median(walls):>10.2f}s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        profiles = workdir / "profiles.yaml"
        profiles.write_text(yaml.safe_dump({"profiles": TOKEN_PROFILES}))
        print(f"{'scenario':<34}{'small':>11}{'large':>11}{'ratio':>10}{'run wall':>11}")
        measure(f"count window, N={SMALL_N:,} / {LARGE_N:,}",
                ["--store", "examples/stores/count_window.py:CountWindowStore",
                 "--window-sizes", f"{SMALL_N},{LARGE_N}", "-k", "count_window"],
                f"N={SMALL_N}", f"N={LARGE_N}", options.runs, workdir)
        measure("token window, 19k / 192k tokens",
                ["--store", "examples/stores/token_window.py:TokenWindowStore",
                 "--token-counter", "examples/stores/token_window.py:message_tokens",
                 "--model-profiles", str(profiles), "-k", "token_window"],
                TOKEN_PROFILES[1]["name"], TOKEN_PROFILES[0]["name"], options.runs, workdir)
    print(f"(medians of {options.runs} runs, one worker each; small and large are the scenario's own durations "
          "at each point of one run, run wall the whole run's, both points and start-up included)")


if __name__ == "__main__":
    main()
