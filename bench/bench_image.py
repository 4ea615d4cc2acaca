"""Benchmark the image: build time cold and cached, container start to first scenario, and the
default run inside the container against the same run on the host.

Needs a Docker engine (../shared/tools/docker-offline.sh starts one here).

    python bench/bench_image.py [--runs 5] [--image memory-regression:bench]
"""

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORE = ["--store", "examples/stores/count_window.py:CountWindowStore"]
FIRST_SCENARIO_MARK = "::test_"


def timed(command, **kwargs):
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, timeout=900, **kwargs)
    return time.perf_counter() - started


def docker_run(image, *args):
    return ["docker", "run", "--rm", "--network", "none", "-v", f"{ROOT}:/workspace", "-w", "/workspace",
            image, *args, "--report-dir", "/tmp/reports"]


def start_to_first_scenario(image):
    """Seconds from `docker run` until the container prints the first scenario's name."""
    started = time.perf_counter()
    process = subprocess.Popen(docker_run(image, *STORE), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen = b""
    while FIRST_SCENARIO_MARK.encode() not in seen:
        chunk = process.stdout.read1(4096)
        if not chunk:
            raise SystemExit(f"the container ended before any scenario:\n{seen.decode(errors='replace')}")
        seen += chunk
    elapsed = time.perf_counter() - started
    process.stdout.read()
    process.wait(timeout=300)
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--image", default="memory-regression:bench")
    options = parser.parse_args()
    build = ["docker", "build", "--network", "host", "-t", options.image, str(ROOT)]
    cold = timed([*build[:2], "--no-cache", *build[2:]])
    cached = statistics.median(timed(build) for _ in range(options.runs))
    size = int(subprocess.run(["docker", "image", "inspect", options.image, "--format", "{{.Size}}"],
                              check=True, capture_output=True, text=True).stdout)
    base = int(subprocess.run(["docker", "image", "inspect", "debian:trixie-slim", "--format", "{{.Size}}"],
                              check=True, capture_output=True, text=True).stdout)
    first = statistics.median(start_to_first_scenario(options.image) for _ in range(options.runs))
    inside = statistics.median(timed(docker_run(options.image, *STORE)) for _ in range(options.runs))
    host = statistics.median(timed([sys.executable, str(ROOT / "entrypoint.py"), *STORE, "--report-dir",
                                    "/tmp/bench-host-reports"], cwd=ROOT) for _ in range(options.runs))
    print(f"image build, cold (--no-cache):        {cold:6.1f} s")
    print(f"image build, cached (median):          {cached:6.1f} s")
    print(f"image size over debian:trixie-slim:    {(size - base) / 1e6:6.1f} MB ({size / 1e6:.1f} MB in all)")
    print(f"container start to first scenario:     {first:6.2f} s (median of {options.runs})")
    print(f"default run in the container (median): {inside:6.2f} s")
    print(f"default run on the host (median):      {host:6.2f} s")
    print(f"container / host:                      {inside / host:6.2f}x")


if __name__ == "__main__":
    main()
