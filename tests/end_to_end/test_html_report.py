"""report.html as a person sees it: rendered by a real browser (headless Chromium)."""

import html
import json
import re
import shutil
import subprocess

import pytest

from tests.conftest import unavailable

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
SCRIPT_CONTENT = "<script>alert('x')</script>"   # one of the round-trip scenario's contents


# Run in the page once pytest-html's own script has built the results: what only layout can tell
# (widths, positions, visible text), written into the DOM that --dump-dom then prints.
PROBE = """<script>
addEventListener("load", () => setTimeout(() => {
  const probe = document.createElement("pre");
  probe.id = "memory-probe";
  probe.textContent = JSON.stringify({
    pageWidth: document.documentElement.scrollWidth, viewportWidth: innerWidth, viewportHeight: innerHeight,
    verdictTop: document.querySelector(".memory-verdict")?.getBoundingClientRect().top,
    top: Object.fromEntries(Object.entries({failure: ".memory-failure", failureDetails: ".memory-failure pre",
                                            environment: "#environment", results: "#results-table"})
      .map(([name, selector]) => [name, document.querySelector(selector)?.getBoundingClientRect().top])),
    rowLinks: [...document.querySelectorAll(".memory-matrix a, .memory-failure a")].map((link) =>
      [link.textContent, document.getElementById(decodeURIComponent(link.hash.slice(1)))?.closest("tbody")
        ?.querySelector(".col-testId")?.textContent || null]),
    visibleText: document.body.innerText,
    skipLogs: [...document.querySelectorAll("tbody.skipped .log")].map((log) => log.textContent),
    skipCollapsed: [...document.querySelectorAll("tbody.skipped .extras-row")]
      .map((row) => row.classList.contains("hidden")),
    failLogs: [...document.querySelectorAll("tbody.failed .log")].map((log) => log.textContent)});
  document.body.append(probe);
}));
</script>"""


def render(report, profile_dir):
    """The DOM after the report's own scripts ran, serialised by the browser (1280x900 pixels)."""
    done = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,900", "--virtual-time-budget=10000",
         f"--user-data-dir={profile_dir}", "--dump-dom", report.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def probe(report, profile_dir):
    """The rendered DOM and what :data:`PROBE` measured in it, on a copy of the report."""
    probed = report.with_name("probed.html")
    page = report.read_text(encoding="utf-8")
    end = page.rindex("</body>")
    probed.write_text(page[:end] + PROBE + page[end:], encoding="utf-8")
    dom = render(probed, profile_dir)
    found = re.search(r'<pre id="memory-probe">(.*?)</pre>', dom, re.S)
    assert found, "the probe did not run"
    return dom, json.loads(html.unescape(found.group(1)))


@pytest.fixture
def browser():
    if BROWSER is None:
        unavailable("REQUIRE_BROWSER", "no chromium on PATH (apt-get install chromium)")
    return BROWSER


def test_failure_shows_escaped_history_and_matrix(browser, run_suite, tmp_path):
    result = run_suite("--store", "tests.stores.broken:WhitespaceStripped")
    assert result.exit_code == 1
    raw = (result.report_dir / "report.html").read_text(encoding="utf-8")
    assert SCRIPT_CONTENT not in raw, "stored content reached report.html unescaped"
    dom = render(result.report_dir / "report.html", tmp_path / "chromium")
    assert SCRIPT_CONTENT not in dom, "stored content became markup in the rendered report"
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in dom, "the failing history is not shown as text"
    assert "memory-diagnosis" in dom and "message 5 of the history was altered" in dom
    assert "Conformance level:</b> none" in dom
    assert "memory-matrix" in dom
    assert re.search(r'<td class="failed"><a href="#scenario-test_[^"]+">failed</a></td>', dom), "no linked cell"
    assert "test_round_trip_keeps_role_content_and_order" in dom


def test_a_crashed_scenario_has_its_row_and_diagnosis(browser, run_suite, tmp_path):
    """xdist sends no teardown for a scenario whose worker died; the run closes the row itself."""
    result = run_suite("--store", "tests.stores.hostile:Segfaults", "-k", "round_trip_keeps or fresh_session")
    assert result.exit_code == 1
    dom = render(result.report_dir / "report.html", tmp_path / "chromium")
    assert "1 Failed" in dom and "1 Passed" in dom
    assert "the store's process was killed by SIGSEGV during test_core.py::" in dom
    assert "tests/stores/hostile.py" in dom, "the diagnosis shows where the store was"


# OffByOneTrim (keeps N+1 messages), raising a 100 KB one-line error in the round trip
LONG_LINE_STORE = """
from tests.stores.broken import OffByOneTrim
from tests.stores.hostile import ROUND_TRIP_MARK


class OffByOneWithALongError(OffByOneTrim):
    def append(self, session_id, role, content):
        if ROUND_TRIP_MARK in content:
            raise ValueError("x" * 100_000)
        super().append(session_id, role, content)
"""


def test_read_at_a_glance(browser, run_suite, tmp_path):
    """The verdict first, a legend for the matrix, skip reasons as text in rows that open collapsed,
    only the differing rows of an off-by-one history marked, the histories in that table and not
    again in the log below it, and no line wider than the page."""
    store = tmp_path / "long_line_store.py"
    store.write_text(LONG_LINE_STORE)
    result = run_suite("--store", f"{store}:OffByOneWithALongError",
                       "-k", "round_trip_keeps or count_window or token_window")
    assert result.exit_code == 1
    totals = result.summary["totals"]
    assert totals == {"total": 7, "passed": 0, "failed": 3, "skipped": 4, "errors": 0}
    dom, seen = probe(result.report_dir / "report.html", tmp_path / "chromium")

    banner = re.search(r'<div class="memory-verdict failed">(.*?)</div>', dom, re.S)
    assert banner, "no verdict banner for a failed run"
    assert '<p class="memory-status">failed</p>' in banner.group(1)
    assert ("0 passed, 3 failed, 4 skipped, 0 errors of 7 scenarios; conformance level none"
            in banner.group(1)), banner.group(1)
    assert dom.index(banner.group()) < dom.index('<table class="memory-matrix">'), "the banner is below the matrix"
    assert seen["verdictTop"] < seen["viewportHeight"], "the banner is not on the first screen"
    # the report opens on the reason: the first failure and its expected against actual on the first
    # screen, above pytest-html's environment and results table, which stay below
    top = seen["top"]
    assert seen["verdictTop"] < top["failure"] < top["failureDetails"] < seen["viewportHeight"], seen["top"]
    assert top["failureDetails"] < top["results"] < top["environment"], seen["top"]
    shown = re.findall(r'<div class="memory-failure">(.*?)</div>', dom, re.S)
    assert len(shown) == 3 and all(html.escape(failure["message"][:400], quote=False) in block
                                   for failure, block in zip(result.summary["failures"], shown))
    assert sum("expected" in block and "actual" in block for block in shown) == 2, "no expected against actual"
    # every matrix cell and failure links to its scenario's row of the results table
    assert len(seen["rowLinks"]) == totals["total"] + totals["failed"], seen["rowLinks"]
    targets = {target.removesuffix("::setup") for _text, target in seen["rowLinks"]}
    assert targets == {r["nodeid"] for r in result.summary["results"]}, seen["rowLinks"]
    assert all(text == target for text, target in seen["rowLinks"] if text.startswith("test_")), seen["rowLinks"]
    # pytest-html's "N tests took" counts only passes and failures: no count may disagree with ours
    assert all(int(n) == totals["total"] for n in re.findall(r"(\d+) tests? took", seen["visibleText"])), \
        "the report states a test count other than the scenarios'"

    assert '<td class="none"></td>' in dom, "the matrix has no blank cell to explain"
    legend = re.search(r'<p class="memory-legend">(.*?)</p>', dom, re.S)
    assert legend, "no legend under the matrix"
    assert "—: scenarios that run once" in legend.group(1)
    assert "a blank cell: the scenario does not run at that window or profile" in legend.group(1)

    assert len(seen["skipLogs"]) == 4
    for log in seen["skipLogs"]:
        assert log.startswith("store lacks token-window: "), log   # the reason, not pytest's tuple
    assert seen["skipCollapsed"] == [True] * 4, "skipped scenarios open as full rows"

    listed = [log for log in seen["failLogs"] if "histories are in the table above" in log]
    assert len(listed) == 2, seen["failLogs"]
    for log in listed:   # the traceback stays, the histories are the table's alone
        assert "test_count_window.py" in log and "expected (" not in log and "actual (" not in log, log

    diffs = re.findall(r'<table class="memory-diff">(.*?)</table>', dom, re.S)
    assert len(diffs) == 2, "the two count-window failures show no aligned histories"
    for diff in diffs:
        marked = re.findall(r'<tr class="differs">(.*?)</tr>', diff, re.S)
        assert len(marked) == 1, f"{len(marked)} rows marked for one extra message"
        assert re.search(r'<td class="number"></td><td class="message">-</td><td class="number">1</td>',
                         marked[0]), "the marked row is not the extra oldest message"

    assert "x" * 4_000 in dom, "the long line is not in the report"
    assert "more characters of this message cut: the suite keeps the first 4 KB of each" in dom, "no cut said"
    assert seen["pageWidth"] <= seen["viewportWidth"], \
        f"the page scrolls sideways: {seen['pageWidth']} pixels wide in a {seen['viewportWidth']} pixel window"


def test_latency_and_footprint_charts_render_as_inline_svg_with_their_numbers(browser, run_suite, tmp_path):
    """The charts are inline SVG: no script, no file or address to fetch; the browser draws them
    (laid out, with a size) and says nothing on its console, and they show summary.json's numbers."""
    result = run_suite("--store", "tests.stores.footprint:TrimsOnlyWhenLoading", "--groups", "latency,footprint",
                       "--window-sizes", "4")
    assert result.exit_code == 0, result.output   # storage a window does not bound is a warning
    report = result.report_dir / "report.html"
    page = report.read_text(encoding="utf-8")
    [warning] = result.summary["warnings"]
    assert "<ul class='memory-warnings'>" in page and html.escape(warning["text"]) in page
    probed = report.with_name("charts.html")
    end = page.rindex("</body>")
    probed.write_text(page[:end] + CHART_PROBE + page[end:], encoding="utf-8")
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--enable-logging=stderr", "--v=0",
         "--window-size=1280,900", "--virtual-time-budget=10000", f"--user-data-dir={tmp_path / 'chromium'}",
         "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line and "charts-probe" not in line]
    assert console == [], "the report wrote to the browser's console:\n" + "\n".join(console)
    found = re.search(r'<pre id="charts-probe">(.*?)</pre>', done.stdout, re.S)
    assert found, "the probe did not run"
    charts = json.loads(html.unescape(found.group(1)))
    [latency] = result.summary["latency"]
    [per_message, footprint] = result.summary["footprint"]
    assert [chart["kind"] for chart in charts] == ["memory-latency-chart", *["memory-footprint-chart"] * 2], charts
    for chart in charts:
        assert chart["width"] > 300 and chart["height"] > 50 and chart["bars"] >= 2, chart
    drawn = charts[0]["text"]
    for operation in ("append", "load"):
        for name in ("p50", "p95", "p99"):
            figure = latency[operation]
            assert f"{operation} {name}" in drawn
            assert f"{figure[name + '_ms']:.3f} ms ({figure['ratio_' + name]}× the floor)" in drawn, (operation, name)
            assert f"floor {figure['floor_' + name + '_ms']:.3f} ms" in drawn
    assert f"growth {per_message['growth']}× (at most 3×)" in charts[1]["text"]
    assert f"growth {footprint['growth']}× (at most 4×)" in charts[2]["text"]
    assert "after 4 appends" in charts[2]["text"] and "after 40 appends" in charts[2]["text"]


# what the browser made of each chart: its class, rendered size, bars and text
CHART_PROBE = """<script>
addEventListener("load", () => setTimeout(() => {
  const probe = document.createElement("pre");
  probe.id = "charts-probe";
  probe.textContent = JSON.stringify([...document.querySelectorAll("svg")].map((svg) => ({
    kind: svg.getAttribute("class"), width: svg.getBoundingClientRect().width,
    height: svg.getBoundingClientRect().height, bars: svg.querySelectorAll("rect").length,
    text: [...svg.querySelectorAll("text")].map((t) => t.textContent).join("\\n")})));
  document.body.append(probe);
}));
</script>"""
