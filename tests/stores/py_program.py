"""A Python class served over the store protocol (docs/protocol.md), as a program of any interpreter
serves one: tests/stores/hostile_program.py misbehaves on top of it. Standard library only.

    memory-regression --store 'cmd:python3 tests/stores/py_program.py path/to/store.py:NAME'

The greeting describes the class's constructor (its parameters by name: ``options`` style, so the
build's values come as keyword arguments) and each instance's public methods; a coroutine's result
is awaited on one event loop of the program's. Requests are answered one at a time, in order.
"""

import asyncio
import importlib.util
import inspect
import json
import sys
import traceback
from pathlib import Path

PROTOCOL = "memory-regression-store/1"


def load(spec: str):
    path, name = spec.rsplit(":", 1)
    module_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = sys.modules[module_spec.name] = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return getattr(module, name), str(Path(path).resolve())


def parameters(function) -> list[dict]:
    return [{"name": name, "optional": parameter.default is not parameter.empty}
            for name, parameter in inspect.signature(function).parameters.items()
            if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)]


def methods(instance) -> list[dict]:
    return [{"name": name, "parameters": [p["name"] for p in parameters(getattr(instance, name))]}
            for name in dir(type(instance)) if not name.startswith("_") and callable(getattr(instance, name))]


def error(exc: BaseException) -> dict:
    return {"name": type(exc).__name__, "message": str(exc), "stack": "".join(traceback.format_exception(exc))}


# called with each request before it is answered (tests/stores/hostile_program.py misbehaves here)
HEARD = lambda request: None  # noqa: E731


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict, cls, instances: dict, runner: asyncio.Runner):
    op = request.get("op")
    if op == "build":
        instance = cls(**request["args"])
        instances[len(instances) + 1] = instance
        return {"instance": len(instances), "methods": methods(instance)}
    if op == "call":
        result = getattr(instances[request["instance"]], request["method"])(*request["args"])
        return runner.run(result) if inspect.isawaitable(result) else result
    if op == "close":
        close = getattr(instances.pop(request["instance"], None), "close", None)
        if callable(close):
            result = close()
            if inspect.isawaitable(result):
                runner.run(result)
        return None
    raise ValueError(f"no such request: {op!r}")


def main() -> None:
    try:
        cls, source = load(sys.argv[1])
        greeting = {"store": cls.__name__, "source": source, "line": inspect.getsourcelines(cls)[1],
                    "language": f"python {sys.version.split()[0]}",
                    "factory": {"kind": "class", "style": "options", "parameters": parameters(cls)}}
    except Exception as exc:   # the store cannot be loaded: the suite shows why
        send({"protocol": PROTOCOL, "error": error(exc)})
        return
    serve(cls, greeting)


def serve(cls, greeting: dict) -> None:
    """Greet, then answer each request on stdin until its end."""
    send({"protocol": PROTOCOL, **greeting})
    instances: dict = {}
    with asyncio.Runner() as runner:
        for line in sys.stdin:
            request = json.loads(line)
            HEARD(request)
            try:
                send({"id": request["id"], "result": answer(request, cls, instances, runner)})
            except Exception as exc:
                send({"id": request["id"], "error": error(exc)})


if __name__ == "__main__":
    main()
