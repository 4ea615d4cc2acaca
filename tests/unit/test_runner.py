"""The runner's checks of its options, made before anything starts (Settings.from_mapping): each bad
input's message."""


import pytest

from memory_regression.errors import UsageError
from memory_regression.settings import Settings
from tests.conftest import GOOD


def settings_error(tmp_path, **values):
    """The usage error Settings.from_mapping raises for ``values`` (the runner's checks of its options,
    made before anything starts), as the runner prints it."""
    with pytest.raises(UsageError) as raised:
        Settings.from_mapping({"store": GOOD, **values}, tmp_path)
    return str(raised.value)


@pytest.mark.parametrize("sizes", ["5,x", "0", "5,5", "", "²", "5,1e3"])
def test_bad_window_sizes(tmp_path, sizes):
    assert "--window-sizes" in settings_error(tmp_path, window_sizes=sizes)


def test_unknown_profile(tmp_path):
    message = settings_error(tmp_path, model_profiles="gpt-9")
    assert "unknown profile gpt-9" in message and "small-4k" in message


@pytest.mark.parametrize("content, phrase", [
    ("profiles: [name: x\n", "not valid YAML"),
    ("models: []\n", "expected a top-level 'profiles:' list"),
    ("profiles:\n  - name: x\n    context_tokens: lots\n", "context_tokens must be a whole number"),
    ("profiles:\n  - name: x\n    context_tokens: 100\n    reserved_output_tokens: 100\n",
     "must exceed reserved_output_tokens"),
])
def test_bad_profile_yaml(tmp_path, content, phrase):
    (tmp_path / "profiles.yaml").write_text(content)
    assert phrase in settings_error(tmp_path, model_profiles=str(tmp_path / "profiles.yaml"))


@pytest.mark.parametrize("flag, timeout", [
    *(("--scenario-timeout", timeout) for timeout in ("soon", "inf", "nan", "0", "-5", "1e400")),
    ("--call-timeout", "soon"), ("--call-timeout", "0"), ("--consistency-timeout", "soon"),
    ("--consistency-timeout", "-1"), ("--append-budget", "0"), ("--append-budget", "briefly")])
def test_bad_timeout(tmp_path, flag, timeout):
    message = settings_error(tmp_path, **{flag.removeprefix("--").replace("-", "_"): timeout})
    assert f"{flag} {timeout!r}: give a number of seconds" in message


def test_profiles_file_that_is_not_utf8(tmp_path):
    (tmp_path / "profiles.yaml").write_bytes("profiles:\n  - name: caf\xe9\n".encode("latin-1"))
    message = settings_error(tmp_path, model_profiles=str(tmp_path / "profiles.yaml"))
    assert "is not UTF-8 text" in message and "save it as UTF-8" in message


def test_unknown_tokenizer_in_a_profile(tmp_path):
    (tmp_path / "profiles.yaml").write_text("profiles:\n  - name: x\n    context_tokens: 900\n"
                                            "    tokenizer: gpt5-tokenizer\n")
    message = settings_error(tmp_path, model_profiles=str(tmp_path / "profiles.yaml"))
    assert "unknown tokenizer 'gpt5-tokenizer'" in message and "cl100k_base" in message


def test_unknown_token_counter(tmp_path):
    assert "unknown tokenizer 'letters'" in settings_error(tmp_path, token_counter="letters")


def test_a_report_dir_another_run_makes_meanwhile_is_used(tmp_path, monkeypatch):
    """Two runs sharing a new report directory race to create it: the one that loses goes on."""
    from pathlib import Path

    from memory_regression.reports.files import prepare_report_dir, ReportPaths

    make = Path.mkdir

    def made_by_the_other_run_first(path, *args, **kwargs):
        make(path)
        return make(path, *args, **kwargs)   # FileExistsError, as for the run that lost the race

    monkeypatch.setattr(Path, "mkdir", made_by_the_other_run_first)
    target = tmp_path / "shared"
    assert prepare_report_dir(ReportPaths(target), "shared") == []
    assert target.is_dir()
