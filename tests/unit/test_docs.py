"""The documentation stays true to the code: what docs/ cites exists."""

import re
import runpy

import yaml

from tests.conftest import ROOT


def test_every_test_the_threat_model_cites_exists():
    """docs/threat-model.md names, for each measure, the test that holds it: each must be a test."""
    text = (ROOT / "docs" / "threat-model.md").read_text(encoding="utf-8")
    tests = {path: set(re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), re.MULTILINE))
             for path in (ROOT / "tests").glob("*/test_*.py")}
    at = re.findall(r"`(\w+/test_\w+\.py)::(test_\w+)`", text)   # a test where the citation says it is
    assert [(path, name) for path, name in at if name not in tests.get(ROOT / "tests" / path, ())] == []
    cited = set(re.findall(r"`(?:\w+/test_\w+\.py::)?(test_\w+)`", text))
    assert len(cited) > 20
    assert cited - set().union(*tests.values()) - {path.stem for path in tests} == set()


def test_the_scenarios_page_is_what_the_suite_says():
    """docs/scenarios.md is written from the suite's docstrings: a scenario changed without
    running docs/build_scenarios.py leaves it stale."""
    build = runpy.run_path(str(ROOT / "docs" / "build_scenarios.py"))
    page = build["render"]()
    assert build["PAGE"].read_text(encoding="utf-8") == page, "run: python docs/build_scenarios.py"
    for path in (ROOT / "suite").glob("test_*.py"):
        for name in re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), re.MULTILINE):
            assert f"### `{name}`" in page, name


def test_readme_stays_short_and_its_links_lead_somewhere():
    """README is the way in (at most 15 KB); the reference is in docs/, and every relative link of
    README and docs/ names a file that exists, and an anchor that its headings make."""
    readme = ROOT / "README.md"
    assert len(readme.read_bytes()) <= 15 * 1024
    for page in [readme, *(ROOT / "docs").glob("*.md")]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if "://" in target:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            assert linked.exists(), f"{page.name}: {target}"
            if anchor and linked.suffix == ".md":
                assert anchor in anchors(linked.read_text(encoding="utf-8")), f"{page.name}: {target}"


def test_readme_names_every_library_whose_stores_run_as_they_are():
    """README's sentence of the libraries whose stores run as they are names the library of every
    framework the package registers (frameworks.registered()): a framework added without it fails."""
    from memory_regression.frameworks import registered
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    sentence = re.search(r"The stores of (.*?) run as they are", text).group(1)
    assert len(registered()) >= 12
    assert [framework.library for framework in registered() if framework.library not in sentence] == []


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces as -."""
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#+ (.*)$", markdown, re.MULTILINE)}


def test_the_noise_thresholds_the_docs_give_are_the_codes():
    """docs/reports.md and docs/measured.md give each figure's threshold; a threshold changed in
    memory_regression/reports/baseline.py without them leaves them stale."""
    from memory_regression.reports.baseline import NOISE

    reports = " ".join((ROOT / "docs" / "reports.md").read_text(encoding="utf-8").split())
    measured = (ROOT / "docs" / "measured.md").read_text(encoding="utf-8")
    for figure, threshold in NOISE.items():
        assert f"{figure} {threshold:g}×" in reports, (figure, threshold)
        assert re.search(rf"^\| (\w+ )?{re.escape(figure)} \|.*\| {threshold:g}× \|$", measured, re.MULTILINE), figure


def test_the_options_table_and_the_actions_inputs_are_the_runners_options():
    """docs/running.md's table of options and action.yml's inputs are written from settings.OPTIONS by
    docs/build_options.py: an option changed without running it leaves them stale, and every option is
    in both, in its order."""
    build = runpy.run_path(str(ROOT / "docs" / "build_options.py"))
    running, action = build["RUNNING"].read_text(encoding="utf-8"), build["ACTION"].read_text(encoding="utf-8")
    assert build["rewritten"](running, action) == (running, action), "run: python docs/build_options.py"
    from memory_regression.options import OPTIONS
    inputs = yaml.safe_load(action)["inputs"]
    assert list(inputs) == [option.flag.lstrip("-") for option in OPTIONS] + ["pytest-args"]
    assert all(f"| `{option.flag}" in running and option.doc for option in OPTIONS)
