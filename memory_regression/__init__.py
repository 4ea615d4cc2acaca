"""A generic regression suite for LLM conversation memory kept in Redis.

The pieces, in the order a run meets them: :mod:`.settings` (the options, checked), :mod:`.run`
(the run, which is the pytest plugin in the runner's process; its verdict in :mod:`.verdict`),
:mod:`.engines` (the Redis servers under test; :mod:`.backend`, :mod:`.servers`),
:mod:`.supervisor` (the worker processes that run the store, and their deadlines), :mod:`.worker`
(the plugin in those processes), :mod:`.fixtures` (what a scenario asks for, one concern each,
over the scenario's :mod:`.context`; its stores in :mod:`.scenario_stores`, its races in
:mod:`.races`, its writer processes in :mod:`.writers`, its own servers in :mod:`.scenario_server`),
:mod:`.outcomes` (an outcome in store terms), :mod:`.contract` (how a
store is found, built and called), :mod:`.capabilities` (what a store claims), :mod:`.reference`
(what a correct store returns), :mod:`.profiles` (model profiles and token counters),
:mod:`.results` (what a run found), :mod:`.reports` (the files), :mod:`.github` (the action's side)
and :mod:`.cli` (the runner). The scenarios themselves live in ``suite/``.
"""

__version__ = "0.1.0"
