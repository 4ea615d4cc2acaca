"""The verdicts tables: the default matrix run on each library store of tests/stores/libraries.py
(the real packages, installed from PyPI by the test extras, or into a virtual environment of their own
where their pins exclude the test extras'), written to docs/frameworks.md between
the ``verdicts`` markers, and on each store of an npm package (``NODE_LIBRARY_STORES``, installed by
``npm ci --prefix tests/stores/node``) between the ``verdicts-node`` markers. Stores built on Redis
modules run on Redis Stack (the test extras' wheel); a client of a memory service runs against one
started over the row's Redis (tests/services.py).

Each row gives the package and its installed version, the store, its shape as the suite bound it,
the window policy it was run with, the verdict and conformance level, and each failing scenario
with its one-line reason. A store that fails other scenarios than the table expects
(``LibraryStore.failing``, each a real bug or contract mismatch checked against the library alone,
and ``may_fail``, a race a run meets or not), or warns in other scenarios than ``LibraryStore.warned``,
makes the script exit 1, and the page is left as it was.

    python bench/verdicts.py [--check]      # --check: run and compare, write nothing
"""

import argparse
import json
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import start_redis_stack  # noqa: E402
from tests.services import serving  # noqa: E402
from tests.stores.libraries import LIBRARY_STORES, NODE_LIBRARY_STORES, LibraryStore  # noqa: E402

PAGE = ROOT / "docs" / "frameworks.md"
# each table's stores, and the markers it is written between
TABLES = ((LIBRARY_STORES, ("<!-- verdicts:start -->", "<!-- verdicts:end -->")),
          (NODE_LIBRARY_STORES, ("<!-- verdicts-node:start -->", "<!-- verdicts-node:end -->")))


def python(entry: LibraryStore) -> str:
    """The interpreter the store runs with: its own virtual environment's, where it has one."""
    return str(ROOT / entry.venv / "bin" / "python") if entry.venv else sys.executable


def run(entry: LibraryStore) -> dict:
    """The summary.json of one default run of the store on a private redis-server, or, for a store
    built on Redis modules, on a Redis Stack of its own."""
    with tempfile.TemporaryDirectory() as reports:
        stack = start_redis_stack(Path(reports)) if entry.needs_modules else None
        server = stack.url() if stack else "server"
        try:
            with serving(entry.service, server) as service:
                subprocess.run([python(entry), str(ROOT / "entrypoint.py"), "--report-dir", reports, "--redis", server,
                                *service, "--store", entry.spec, *entry.args],
                               cwd=ROOT / entry.project, capture_output=True, text=True, timeout=600)
        finally:
            if stack:
                stack.stop()
        return json.loads((Path(reports) / "summary.json").read_text())


def package_version(entry: LibraryStore) -> str:
    """The installed version: the PyPI distribution's (in its own virtual environment, where it has one), or the
    npm package's in its project's node_modules."""
    if entry.venv:
        asked = f"import importlib.metadata as m; print(m.version({entry.package!r}))"
        return subprocess.run([python(entry), "-c", asked], capture_output=True, text=True, check=True).stdout.strip()
    if not entry.project:
        return version(entry.package)
    manifest = ROOT / entry.project / "node_modules" / entry.package / "package.json"
    return json.loads(manifest.read_text(encoding="utf-8"))["version"]


def policy(entry: LibraryStore) -> str:
    args = list(entry.args)
    return args[args.index("--window-policy") + 1] if "--window-policy" in args else "suffix"


def scenario(nodeid: str) -> str:
    return nodeid.split("::")[-1].split("[")[0]


def row(entry: LibraryStore, summary: dict) -> str:
    failures = "; ".join(f"`{f['nodeid'].split('::')[-1]}`: {f['message']}" for f in summary["failures"])
    warned = sorted({scenario(w["nodeid"]) for w in summary["warnings"]})
    warnings = f"warned by {', '.join(f'`{name}`' for name in warned)}" if warned else ""
    found = "; ".join(filter(None, [failures, warnings]))
    if found and entry.why:
        found += f" ({entry.why})"
    cells = [entry.package, package_version(entry), entry.store, summary.get("shape") or "",
             policy(entry), f"{summary['status']} ({summary['conformance_level']})", found or "none"]
    return "| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in cells) + " |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="run and compare only; write nothing")
    options = parser.parse_args()
    tables, unexpected = [], []
    for stores, markers in TABLES:
        rows = []
        for entry in stores:
            summary = run(entry)
            failing = {f["scenario"] for f in summary["failures"]}
            warned = {scenario(w["nodeid"]) for w in summary["warnings"]}
            if (not set(entry.failing) <= failing <= {*entry.failing, *entry.may_fail}
                    or warned - set(entry.may_warn) != set(entry.warned)
                    or summary["status"] not in ("passed", "failed")):
                unexpected.append(f"{entry.store}: {summary['status']}, failing {sorted(failing)}, warned by "
                                  f"{sorted(warned)}, expected failing {sorted(entry.failing)} (and perhaps "
                                  f"{sorted(entry.may_fail)}) and warned by {sorted(entry.warned)}: "
                                  f"{summary.get('message') or ''}")
            rows.append(row(entry, summary))
            print(rows[-1], flush=True)
        tables.append((markers, rows))
    if unexpected:
        print("unexpected verdicts:\n" + "\n".join(unexpected), file=sys.stderr)
        return 1
    if not options.check:
        text = PAGE.read_text(encoding="utf-8")
        for (start, end), rows in tables:
            table = "\n".join(["| package | version | store | shape | policy | verdict | failing and warning "
                               "scenarios |", "|---|---|---|---|---|---|---|", *rows])
            before, _, rest = text.partition(start)
            text = f"{before}{start}\n{table}\n{end}{rest.partition(end)[2]}"
        PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
