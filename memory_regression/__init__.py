"""A generic regression suite for LLM conversation memory kept in Redis.

The package is layered, each layer a sub-package that imports only from those below it (import-linter
checks it: pyproject.toml's contracts): at the top the faces users and the runner start from
(:mod:`.cli`, :mod:`.plugin`, :mod:`.testing`, :mod:`.stateful`), then :mod:`.runner` (a run),
:mod:`.worker` (a worker's side), :mod:`.harness` (what scenarios use), :mod:`.settings` (the options),
:mod:`.reports` (results and report files), :mod:`.reference` (what a correct store returns),
:mod:`.contract` (how a store is found, built and called), :mod:`.frameworks` (the framework shapes),
:mod:`.engines` and :mod:`.channel`, and at the bottom :mod:`.groups`, :mod:`.redaction` and
:mod:`.errors`. docs/architecture.md walks through them. The scenarios themselves live in ``suite/``.
"""

__version__ = "0.1.0"
