"""report.html as a person sees it: rendered by a real browser (headless Chromium)."""

import os
import shutil
import subprocess

import pytest

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
SCRIPT_CONTENT = "<script>alert('x')</script>"   # one of the round-trip scenario's contents


def render(report, profile_dir):
    """The DOM after the report's own scripts ran, serialised by the browser."""
    done = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile_dir}", "--dump-dom", report.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def browser():
    if BROWSER is None:
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail("REQUIRE_BROWSER=1 but no chromium on PATH")
        pytest.skip("no chromium on PATH (apt-get install chromium)")
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
    assert "<td class=\"failed\">failed</td>" in dom and "memory-matrix" in dom
    assert "test_round_trip_keeps_role_content_and_order" in dom


def test_a_crashed_scenario_has_its_row_and_diagnosis(browser, run_suite, tmp_path):
    """xdist sends no teardown for a scenario whose worker died; the run closes the row itself."""
    result = run_suite("--store", "tests.stores.hostile:Segfaults", "-k", "round_trip or fresh_session")
    assert result.exit_code == 1
    dom = render(result.report_dir / "report.html", tmp_path / "chromium")
    assert "1 Failed" in dom and "1 Passed" in dom
    assert "the store's process was killed by SIGSEGV during test_core.py::" in dom
    assert "tests/stores/hostile.py" in dom, "the diagnosis shows where the store was"
