"""A server started from a container image: the engine ``--redis image:NAME``
(``image:redis:8.2``, ``image:valkey/valkey:8``, ``image:redis/redis-stack-server``), through
testcontainers, so that a store is checked against the exact server versions (and modules)
production runs.

The container gets no network (``--network none``): the server listens on no TCP port
(``--port 0``) but on a unix socket in a temporary directory of the runner's, bind-mounted into
the container, which the suite and the stores reach as ``unix:///...?db=N``. Nothing is published,
no bridge network is needed, and nothing else on the machine can reach the server.

How the server's command line is found from the image's configuration (``docker image inspect``):

1. an image whose default command is a server binary (``redis-server``, ``valkey-server``: the
   official ``redis`` and ``valkey/valkey`` images) runs that binary with the suite's arguments,
   through the image's own entrypoint (which drops root and sets up the server's user);
2. an image whose command is an ``entrypoint.sh`` script (``redis/redis-stack-server``, whose
   script starts ``redis-stack-server`` with its modules and appends ``$REDIS_ARGS``) keeps its
   command and gets the arguments in ``REDIS_ARGS``;
3. any other image (a plain Debian with the server installed) runs the first of ``valkey-server``,
   ``redis-server``, ``redis-stack-server`` found on the image's PATH.

The container carries the label ``memory-regression.engine=<the runner's pid>`` and is removed when
the run ends, however it ends: the run removes it, and a watcher process started before it (in its
own session, so Ctrl-C does not reach it) removes the container labelled with its token when the
runner's end of a pipe closes, which happens even when the runner is killed with SIGKILL.
testcontainers' own reaper (Ryuk) is an image to pull; it is left off unless
``TESTCONTAINERS_RYUK_DISABLED`` says otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from .backend import Backend
from ..errors import BackendError, BackendUsageError
from .servers import await_server, with_userinfo

LABEL = "memory-regression.engine"
SOCKET_DIR = "/memory-regression"          # where the runner's temporary directory is mounted
SOCKET_NAME = "redis.sock"
START_TIMEOUT_S = 30.0                     # a container's start, and its server's, on a loaded machine
SERVER_ARGS = ("--port", "0", "--unixsocket", f"{SOCKET_DIR}/{SOCKET_NAME}", "--unixsocketperm", "777",
               "--appendonly", "no", "--protected-mode", "no")
SERVER_BINARIES = ("valkey-server", "redis-server", "redis-stack-server")
FIND_SERVER = ('for server in ' + " ".join(SERVER_BINARIES) + '; do command -v "$server" >/dev/null && '
               'exec "$server" "$@"; done; echo "no ' + ", ".join(SERVER_BINARIES) + ' in this image" >&2; exit 127')
# the watcher: waits for the runner's end of its stdin to close, then removes the container labelled
# with its token (labelled before it is created, so a runner killed in between leaves nothing either)
WATCHER = ("import sys\nsys.stdin.buffer.read()\ntry:\n    import docker\n    api = docker.from_env().api\n"
           "    for found in api.containers(all=True, filters={'label': sys.argv[1]}):\n"
           "        api.remove_container(found['Id'], force=True)\nexcept Exception:\n    pass\n")


def server_command(config: dict[str, Any]) -> dict[str, Any]:
    """How to start the image's server with the suite's arguments, from its configuration
    (``Config`` of ``docker image inspect``): the container's ``command``, and ``entrypoint`` and
    ``environment`` where they change (see the module's docstring)."""
    command = list(config.get("Cmd") or [])
    entrypoint = list(config.get("Entrypoint") or [])
    if command and os.path.basename(command[0]) in SERVER_BINARIES:
        return {"command": [command[0], *SERVER_ARGS]}
    if any(part.endswith("entrypoint.sh") for part in entrypoint + command):
        return {"command": command or None, "environment": {"REDIS_ARGS": " ".join(SERVER_ARGS)}}
    return {"entrypoint": ["sh", "-c", FIND_SERVER, "sh"], "command": list(SERVER_ARGS)}


class ServerContainer:
    """A running server container, its watcher and its socket's directory."""

    def __init__(self, image: str, container: Any, watcher: subprocess.Popen, workdir: str):
        self.image, self.container, self.watcher, self.workdir = image, container, watcher, workdir

    @property
    def wrapped(self) -> Any:
        return self.container.get_wrapped_container()

    def problem(self) -> str | None:
        """Why the container's server cannot answer (it exited, or was removed), or None."""
        import docker
        try:
            self.wrapped.reload()
        except docker.errors.NotFound:
            return f"the container of image {self.image} was removed"
        except docker.errors.DockerException as exc:
            return f"the Docker engine does not answer about the container of image {self.image}: {exc}"
        status = self.wrapped.status
        if status != "running":
            code = self.wrapped.attrs.get("State", {}).get("ExitCode")
            return f"the container of image {self.image} is {status} (exit status {code})"
        return None

    def logs(self) -> str:
        try:
            return self.wrapped.logs().decode(errors="replace").strip()[-500:]
        except Exception:   # the container is gone already: nothing more to show
            return ""

    def stop(self) -> None:
        try:
            self.container.stop()   # removed, forcibly
        except Exception:   # never created, or removed already (by hand)
            pass
        if self.watcher.stdin is not None:
            self.watcher.stdin.close()   # the watcher's signal: it removes nothing more and ends
        try:
            self.watcher.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.watcher.kill()
            self.watcher.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def docker_client(image: str) -> Any:
    """A client of the Docker engine, or a usage error saying why there is none."""
    try:
        import docker
    except ImportError:
        docker = None
    if docker is None or importlib.util.find_spec("testcontainers") is None:
        raise BackendUsageError(f"--redis image:{image} needs the Python packages testcontainers and docker "
                                "(pip install testcontainers docker)")
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:   # no socket, no engine, no permission on it
        raise BackendUsageError(f"--redis image:{image}: no Docker engine answers ({exc}); start one, or choose "
                                "another engine (server, valkey, fakeredis or a redis:// URL)") from None
    return client


def image_config(client: Any, image: str) -> dict[str, Any]:
    """The image's configuration; pulled first when it is not here (a usage error when that fails)."""
    import docker
    try:
        try:
            return client.images.get(image).attrs.get("Config") or {}
        except docker.errors.ImageNotFound:
            return client.images.pull(image).attrs.get("Config") or {}
    except docker.errors.DockerException as exc:
        raise BackendUsageError(f"--redis image:{image}: the image is not here and could not be pulled: "
                                f"{exc}") from None


def start_container_server(image: str) -> Backend:
    """Start the server of ``image`` with no network, on a unix socket in a bind-mounted temporary
    directory; wait until it answers."""
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")   # read when testcontainers is imported
    client = docker_client(image)
    start = server_command(image_config(client, image))
    from testcontainers.core.container import DockerContainer

    token = secrets.token_hex(8)
    watcher = subprocess.Popen([sys.executable, "-c", WATCHER, f"{LABEL}.token={token}"],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)   # Ctrl-C does not reach it
    workdir = tempfile.mkdtemp(prefix="memory-regression-engine-")
    os.chmod(workdir, 0o777)   # noqa: S103 (the image's server user, whichever uid it has, makes its socket here)
    container = (DockerContainer(image)
                 .with_volume_mapping(workdir, SOCKET_DIR, "rw")
                 .with_kwargs(network=None, network_mode="none", entrypoint=start.get("entrypoint"),
                              labels={LABEL: str(os.getpid()), f"{LABEL}.token": token}))
    server = ServerContainer(image, container, watcher, workdir)
    container.with_command(start["command"])
    for name, value in start.get("environment", {}).items():
        container.with_env(name, value)
    try:
        container.start()
    except Exception as exc:
        server.stop()
        raise BackendError(f"--redis image:{image}: the container could not be started: {exc}") from None
    url = f"unix://{workdir}/{SOCKET_NAME}?db=0"
    backend = Backend("server", url, "", max_workers=16, _owned=(server,))
    short_id = container.get_wrapped_container().short_id
    password = secrets.token_hex(16)
    try:
        version, userinfo = await_server(url, lambda: server.problem() is None, password, START_TIMEOUT_S)
    except BackendError as exc:
        last_error = exc
    else:
        backend.admin_url, backend.secrets = with_userinfo(url, userinfo), (password,)
        backend.description = f"{version} (container of image {image}, {short_id}, no network)"
        return backend
    why = server.problem() or f"it did not answer on its socket within {START_TIMEOUT_S:.0f} s ({last_error})"
    logs = server.logs()
    backend.stop()
    inside = (" (the runner itself runs in a container: the engine cannot see its temporary directory)"
              if os.path.exists("/.dockerenv") else "")
    raise BackendError(f"--redis image:{image}: {why}{inside}" + (f"; its output: {logs}" if logs else ""))

