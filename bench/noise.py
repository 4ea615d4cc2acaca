"""Noise: how far the figures a baseline compares move between identical runs, and whether a real
change stands out of it (the thresholds of memory_regression/reports/baseline.py's NOISE).

One store spec, ``memory.py:Memory``, is rewritten between runs as a pull request rewrites a
project's store: first the count-window example as it is, for the base run; then, ``--runs`` times
each and interleaved, so that machine noise falls on all three alike:

- **identical**: the same store again, compared with the base run: no figure may be flagged;
- **slowed**: its appends each sleep a delay drawn from a seeded generator (0.5 to 1 ms, some 3 to
  6 times what a whole append takes here): an append figure must be flagged in every run;
- **larger**: each message stored with a copy of its content beside it (the whole prompt kept
  with each message), about 2x the bytes per message: bytes per message must be flagged in every run.

Each run is the runner end to end (``entrypoint.py``, two workers, the private server) with the
default groups, as a user's run is (latency is measured while other scenarios run beside it), and
``--baseline`` the base run's summary.json.
It prints, per figure, the largest change the identical runs showed (either way: max(now/before,
before/now)), median and largest, and how many runs of each experiment were flagged, and exits 1
unless identical runs were never flagged and the changed ones always were.

``--busy K`` runs K processes that keep a core busy beside the runs, as a shared runner's other
jobs do (each ends by itself once the bench's longest possible time has passed, and is killed at
its end).

    python bench/noise.py [--runs 20] [--busy 2]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN_TIMEOUT_S = 300
STORE = (ROOT / "examples" / "stores" / "count_window.py").read_text(encoding="utf-8")
VARIANTS = {
    "identical": STORE + "\n\nMemory = CountWindowStore\n",
    "slowed": STORE + '''

import random
import time

DELAYS = random.Random(20)   # seeded: the same delays in every run


class Memory(CountWindowStore):
    def add_message(self, session_id, role, content):
        time.sleep(DELAYS.uniform(0.0005, 0.001))
        super().add_message(session_id, role, content)
''',
    "larger": STORE + '''

class Memory(CountWindowStore):
    def add_message(self, session_id, role, content):   # the whole prompt kept beside each message
        key = self._key(session_id)
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(key, json.dumps({"role": role, "content": content, "prompt": content}, ensure_ascii=False))
            pipe.ltrim(key, -self.max_history, -1)
            if self.ttl:
                pipe.expire(key, self.ttl)
            pipe.execute()

    def get_context(self, session_id):
        return [{"role": m["role"], "content": m["content"]} for m in super().get_context(session_id)]
''',
}
# what each experiment must show in every run: one of these figures flagged (none for identical)
MUST_FLAG = {"identical": (), "slowed": ("append p50 × floor", "append p95 × floor"), "larger": ("bytes per message",)}


def run(workdir: Path, variant: str, reports: Path, baseline: Path | None) -> dict:
    """Write the variant as memory.py and run the suite on it; return its summary.json."""
    (workdir / "memory.py").write_text(VARIANTS[variant], encoding="utf-8")
    done = subprocess.run([sys.executable, str(ROOT / "entrypoint.py"), "--store", "memory.py:Memory", "--report-dir",
                           str(reports),
                           *(["--baseline", str(baseline)] if baseline else [])],
                          cwd=workdir, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    try:
        return json.loads((reports / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        sys.exit(f"{variant}: no summary.json ({exc}); exit status {done.returncode}: {done.stderr[-800:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--busy", type=int, default=0, help="processes that keep a core busy beside the runs")
    options = parser.parse_args()
    longest = RUN_TIMEOUT_S * (1 + options.runs * len(VARIANTS))
    spin = f"import time\nend = time.monotonic() + {longest}\nwhile time.monotonic() < end:\n    pass\n"
    busy = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(options.busy)]
    try:
        return compare_runs(options)
    finally:
        for process in busy:
            process.kill()
            process.wait()


def compare_runs(options: argparse.Namespace) -> int:
    spread: dict[str, list[float]] = {}           # figure -> max(change, 1/change) of each identical run
    flagged = {variant: 0 for variant in VARIANTS}
    least: dict[str, dict[str, float]] = {variant: {} for variant in MUST_FLAG if MUST_FLAG[variant]}
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        base = run(workdir, "identical", workdir / "base", None)
        if base["status"] != "passed":
            sys.exit(f"the base run did not pass: {base['status']}: {base.get('message')}")
        for index in range(1, options.runs + 1):
            for variant, must in MUST_FLAG.items():
                comparison = run(workdir, variant, workdir / variant, workdir / "base" / "summary.json")["comparison"]
                worse = {change["figure"] for change in comparison["figures"] if change["verdict"] == "worse"}
                if variant == "identical":
                    flagged[variant] += bool(worse or any(c["verdict"] == "better" for c in comparison["figures"]))
                    for change in comparison["figures"]:
                        spread.setdefault(change["figure"], []).append(max(change["change"], 1 / change["change"]))
                else:
                    flagged[variant] += bool(set(must) & worse)
                    for change in comparison["figures"]:
                        if change["figure"] in must:
                            least[variant][change["figure"]] = min(change["change"],
                                                                   least[variant].get(change["figure"], 1e9))
                print(f"run {index}/{options.runs} {variant}: flagged {sorted(worse) or 'nothing'}", flush=True)
    from memory_regression.reports.baseline import NOISE
    print(f"\nIdentical runs ({options.runs}, each against the base run; {options.busy} busy processes beside), "
          "each figure's change either way over all its cases:\n")
    print("| figure | median | largest | threshold |\n|---|---|---|---|")
    for figure, changes in spread.items():
        allowed = next(value for name, value in NOISE.items() if figure.endswith(name))
        print(f"| {figure} | {statistics.median(changes):.2f}× | {max(changes):.2f}× | {allowed:g}× |")
    print(f"\nRuns flagged: identical {flagged['identical']} of {options.runs} (a figure beyond the noise either way); "
          + "; ".join(f"{variant} {flagged[variant]} of {options.runs} (smallest change: "
                      + ", ".join(f"{figure} {value:.2f}×" for figure, value in least[variant].items()) + ")"
                      for variant in least))
    ok = flagged["identical"] == 0 and all(flagged[variant] == options.runs for variant in least)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
