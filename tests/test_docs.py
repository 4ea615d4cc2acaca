"""The documentation stays true to the code: what docs/ cites exists."""

import re

from tests.conftest import ROOT


def test_every_test_the_threat_model_cites_exists():
    """docs/threat-model.md names, for each measure, the test that holds it: each must be a test."""
    text = (ROOT / "docs" / "threat-model.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"`(?:test_\w+\.py::)?(test_\w+)`", text)) | set(re.findall(r"::(test_\w+)", text))
    defined = {name for path in (ROOT / "tests").glob("test_*.py")
               for name in re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), re.MULTILINE)}
    files = {path.stem for path in (ROOT / "tests").glob("test_*.py")}
    assert len(cited) > 20
    assert cited - defined - files == set()
