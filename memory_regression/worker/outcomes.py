"""A scenario's outcome in store terms: what the reports say of a failure or a skip.

:func:`describe_outcome` turns pytest's report of a scenario into a verdict: one line saying what
happened (a history mismatch's diagnosis, an assertion's first line, the store's exception with a
hint where one is known: a command the suite forbids, CROSSSLOT or MOVED on a cluster, a Redis
module the server lacks, a client library's defect, bytes decoded from ``str``), and the details
worth reading. :func:`cap` and :func:`redacted` keep what a report carries short and free of
secrets.
"""

from __future__ import annotations

import re
import urllib.error
from pathlib import Path
from typing import Any

import _pytest
import pluggy
import pytest
import redis

from ..contract.adapter import FACTORY, raised_by_store, raised_in
from .clients import IDLE_CLOSE_SIGN, idle_close_defect
from ..contract.frames import exception_chain, exception_line, user_traceback
from ..redaction import Redactor, map_strings, redact_url
from ..reports.results import DETAILS_LIMIT
from ..reports.phase_report import Verdict
from ..reference.diagnosis import HistoryMismatch
from ..contract.foreign import StoreProcessError



# the frames of pytest's own machinery, left out of a failure the suite renders itself
PYTEST_DIRECTORIES = tuple(str(Path(module.__file__).resolve().parent) for module in (_pytest, pluggy))


def unrendered_report(item: pytest.Item, call: pytest.CallInfo, error: Exception) -> pytest.TestReport:
    """The report of a scenario whose failure pytest could not render (Python 3.11 raises "SystemError:
    AST constructor recursion depth mismatch" on some deep chains of exceptions; a store's frame may
    hold a ``__tracebackhide__`` that raises): the store's exception as the traceback module renders
    it, and what stopped pytest."""
    exc = call.excinfo.value if call.excinfo else None
    try:
        text = user_traceback(exc, PYTEST_DIRECTORIES)[-DETAILS_LIMIT:] if exc is not None else ""
    except Exception:   # noqa: BLE001 (its own rendering failing too: its type and text are left)
        text = f"{type(exc).__name__}: {exc!r:.500}"
    text += f"\n(pytest could not render this failure: {type(error).__name__}: {error})"
    return pytest.TestReport(item.nodeid, item.location, dict.fromkeys(item.keywords, 1), "failed", text, call.when,
                             [], call.duration, call.start, call.stop, user_properties=item.user_properties)


def redacted(value: Any, redactor: Redactor) -> Any:
    """``value`` with every string in it, however nested in dicts and lists, redacted."""
    return map_strings(value, redactor.text)


def describe_outcome(report: pytest.TestReport, excinfo: Any, stores: list[Any] = ()) -> Verdict:
    """The verdict of a failure or skip (:class:`~.phase_report.Verdict`). ``stores``: the instances the
    scenario built, whose own clients may be the cause."""
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        return Verdict(reason.removeprefix("Skipped: "))
    if excinfo is None:   # a scenario that passed with warnings, failed by --strict, says them
        return Verdict(str(report.longrepr or ""))
    exc, replayed = unwrap_flaky(excinfo.value)
    verdict = _describe(report, exc, stores)
    if replayed:   # the store's own failure, if Hypothesis kept it, and that a replay went otherwise
        if exc is excinfo.value:   # Hypothesis kept no failure: what it says of the store is all there is
            return Verdict(UNREPRODUCIBLE, verdict.details)
        return verdict.noted(UNREPRODUCIBLE)
    return verdict


# what Hypothesis's Flaky errors mean, in store terms
UNREPRODUCIBLE = ("not reproducible: when the same steps ran again, the store behaved differently (its results "
                  "depend on something the steps do not set: time, randomness, a counter or cache of its process, "
                  "another process)")


def unwrap_flaky(exc: BaseException) -> tuple[BaseException, bool]:
    """The store's own failure inside a Hypothesis ``Flaky`` error (raised when a replay of the same
    steps behaved otherwise), and whether there was one; ``exc`` itself otherwise."""
    from hypothesis.errors import Flaky
    if not isinstance(exc, Flaky):
        return exc, False
    inner = next(iter(getattr(exc, "exceptions", ())), None) or exc.__context__ or exc.__cause__
    return (inner if inner is not None else exc), True


def _describe(report: pytest.TestReport, exc: BaseException, stores: list[Any]) -> Verdict:
    if isinstance(exc, BaseExceptionGroup):   # Hypothesis found several distinct failures: each is told
        return _describe_each(report, exc, stores)
    steps = "\n".join(getattr(exc, "__notes__", []))  # Hypothesis lists the steps of a failing sequence here
    if isinstance(exc, HistoryMismatch):
        return Verdict(exc.diagnosis, "\n".join(filter(None, [exc.listing.text(), steps])), exc.listing, steps)
    if isinstance(exc, AssertionError):
        text = str(exc).split("\nassert ")[0]
        first, _, rest = text.partition("\n")
        return Verdict(first, rest)
    forbidden = forbidden_command(exc)
    if forbidden:
        return Verdict(f"the store ran {forbidden} on the suite's Redis server, which the suite forbids: a "
                        "memory store must never flush, pause, reconfigure or shut down the server (it would destroy "
                        "or hold every other session's history)", report.longreprtext[-DETAILS_LIMIT:])
    short = exception_line(exc)
    if not raised_by_store(exc):
        where = "outside any call of the store" if report.when == "call" else f"in the scenario's {report.when}"
        return Verdict(f"the suite's own code raised {short}, {where}: {NOT_THE_STORE}",
                       report.longreprtext[-DETAILS_LIMIT:], not_judged=True)
    origin = "building the store raised" if raised_in(exc) == FACTORY else "the store raised"
    if report.when != "call":
        origin = f"in the scenario's {report.when}, {origin}"
    if isinstance(exc, AttributeError) and "'str' object has no attribute 'decode'" in str(exc):
        short = short.split(". Did you mean")[0]   # Python 3.12+ suggests encode: the hint below says what to do
        short += (" (the store decodes bytes, but the suite's redis client is built with "
                  "decode_responses=True and returns str: decode only bytes, or build your own client "
                  "from the redis_url parameter)")
    hint = cluster_hint(exc) or (idle_close_defect(stores) if IDLE_CLOSE_SIGN in str(exc) else None)
    if hint:
        short += f" ({hint})"
    answer = service_answer(exc)
    if answer:   # another component failed, the service the store calls: said as what it is
        return Verdict(f"the service the store calls failed: it answered {answer}; {origin} {short}",
                        report.longreprtext[-DETAILS_LIMIT:])
    return Verdict(f"{origin} {short}", report.longreprtext[-DETAILS_LIMIT:])


def service_answer(exc: BaseException) -> str | None:
    """The HTTP error status a service answered the store, where the exception carries the response (httpx's
    HTTPStatusError, requests' HTTPError, an API client's errors built on them): ``HTTP 500 (Internal Server
    Error) to PUT URL``, the URL without its credentials; or urllib's HTTPError, which is the response (``HTTP
    500 (Internal Server Error) from URL``: it does not keep the method)."""
    for link in exception_chain(exc):
        if isinstance(link, urllib.error.HTTPError) and type(link.code) is int and link.code >= 400:
            url = link.url if isinstance(link.url, str) and link.url else None
            return _http_answer(link.code, link.reason, f"from {redact_url(url)}" if url else "")
        response = getattr(link, "response", None)
        status = getattr(response, "status_code", None)
        if type(status) is int and status >= 400:
            phrase = getattr(response, "reason_phrase", None) or getattr(response, "reason", None)
            request = getattr(response, "request", None)
            method, url = getattr(request, "method", None), getattr(request, "url", None)
            return _http_answer(status, phrase, f"to {method} {redact_url(str(url))}"
                                if isinstance(method, str) and url else "")
    return None


def _http_answer(status: int, phrase: Any, where: str) -> str:
    """``HTTP 500 (Internal Server Error) where``: the phrase where it is text, ``where`` where it is known."""
    return (f"HTTP {status}" + (f" ({phrase})" if isinstance(phrase, str) and phrase else "")
            + (f" {where}" if where else ""))


def _describe_each(report: pytest.TestReport, group: BaseExceptionGroup, stores: list[Any]) -> Verdict:
    """Several distinct failures in one scenario (Hypothesis's "found 2 distinct failures"): the store's are its
    failures, each said with its own details; only when none is the store's did the scenario judge nothing."""
    parts = [_describe(report, each, stores) for each in group.exceptions]
    found = [part for part in parts if not part.not_judged]
    if not found:
        return parts[0]
    others = len(parts) - len(found)
    message = (f"{len(found)} distinct failures: " + "; ".join(f"({i}) {part.message}" for i, part in
                                                                enumerate(found, 1))
               + (f"; and {others} raised by the suite's own code ({NOT_THE_STORE})" if others else ""))
    return Verdict(message, "\n\n".join(f"({i}) {part.message}\n{part.details}".rstrip()
                                          for i, part in enumerate(found, 1)))


# what a scenario's exception that no call of the store raised is (adapter.raised_by_store): the scenario
# judged nothing, and its verdict says so (not_judged: recording makes it an error, not a failure)
NOT_THE_STORE = ("not a finding about the store (a defect of the suite, or of the machine: please report it if it "
                 "repeats)")


def forbidden_command(exc: BaseException) -> str | None:
    """The command named by Redis' NOPERM error, where the store ran one the suite forbids."""
    for link in exception_chain(exc):
        text = str(link)
        if "no permissions to run the" in text:  # Redis' NOPERM error, as redis-py words it
            name = text.split("'")[1] if text.count("'") >= 2 else "a forbidden command"
            return name.upper().replace("|", " ")   # client|pause: CLIENT PAUSE
    return None


# what a Redis Cluster answers, or redis-py's cluster client raises, when one transaction or script
# touches keys of several hash slots (a script's undeclared key on another node: "non local key")
CROSS_SLOT = re.compile(r"CROSSSLOT|hash to the same slot|must map to the same (key )?slot|non local key")


CROSS_SLOT_HINT = (
    "CROSSSLOT: a Redis Cluster runs one transaction (MULTI/EXEC) or script only on keys of one hash slot; "
    "give all keys of a session one hash tag, the session id in braces, as in chat:{<session>}:messages "
    "and chat:{<session>}:meta (only the part in braces is hashed), and declare every key a script "
    "touches in KEYS")


MOVED_HINT = ("MOVED: on a Redis Cluster the key lives on another node, and the store's client is not "
              "cluster-aware: {fix}")
# the fix, for a Python store (whose MOVED is redis-py's MovedError), and for a store of another language,
# whose client's error says the reply itself (ioredis' and node-redis' ReplyError: MOVED 3999 127.0.0.1:7001)
MOVED_FIX = ("use the client the suite passes, or build a redis.cluster.RedisCluster from redis_url "
             "(RedisCluster.from_url; redis.asyncio.RedisCluster for an async store)")
FOREIGN_MOVED_FIX = ("build a cluster client from redis_url (in Node.js, ioredis' new Redis.Cluster([redisUrl]) or "
                     "node-redis' createCluster({ rootNodes: [{ url: redisUrl }] }))")
MOVED_REPLY = re.compile(r"MOVED \d+ \S+:\d+")


def cluster_hint(exc: BaseException) -> str | None:
    """What to say when a store written for one server fails on a Redis Cluster: keys of one
    transaction or script in several slots (CROSSSLOT), or a client that is not cluster-aware
    (MOVED, also where it caused the error raised: a MULTI's EXECABORT)."""
    for link in exception_chain(exc):
        if CROSS_SLOT.search(f"{type(link).__name__}: {link}"):
            return CROSS_SLOT_HINT
        if isinstance(link, redis.exceptions.MovedError):
            return MOVED_HINT.format(fix=MOVED_FIX)
        if isinstance(link, StoreProcessError) and MOVED_REPLY.match(str(link)):
            return MOVED_HINT.format(fix=FOREIGN_MOVED_FIX)
    return None


# the prefix of a module's commands -> the Redis module that provides them
MODULE_COMMANDS = {"FT.": "RediSearch", "JSON.": "RedisJSON", "TS.": "RedisTimeSeries", "BF.": "RedisBloom",
                   "CF.": "RedisBloom", "CMS.": "RedisBloom", "TOPK.": "RedisBloom", "TDIGEST.": "RedisBloom"}


def module_command(exc: BaseException) -> tuple[str, str] | None:
    """The command of a Redis module the store ran and the server lacked (Redis answers "unknown
    command 'FT._LIST'"), and that module: a configuration to fix, not a finding."""
    for link in exception_chain(exc):
        found = re.search(r"unknown command '([^']+)'", str(link), re.IGNORECASE)
        command = found.group(1).upper() if found else ""
        module = next((name for prefix, name in MODULE_COMMANDS.items() if command.startswith(prefix)), None)
        if module:
            return command, module
    return None


def missing_module_message(command: str, module: str) -> str:
    return (f"the store ran {command}, a command of the {module} module, which the Redis server under "
            f"test lacks: run the suite against a server with {module} (Redis Stack, or Redis 8 with "
            "its modules) with --redis redis://HOST:PORT/DB; in GitHub Actions, start one as a "
            "services: container and pass its URL as the redis input")


INDEX_ON_DATABASE_ZERO = ("the store creates a RediSearch index, which Redis allows on database 0 only, and this "
                          "worker's database is another: give --redis a URL ending in /0 (a URL runs one worker, on "
                          "the database it names), or run one worker (-- -n 1), whose database is 0")


def server_misfit(exc: BaseException) -> str | None:
    """What to fix where the store raised for want of what the server under test gives it: a
    module the server lacks (:func:`module_command`), or a RediSearch index on a database other
    than 0, which Redis refuses ("Cannot create index on db != 0"); None for anything else. A
    configuration to fix, not a finding: every scenario would fail the same way."""
    missing = module_command(exc)
    if missing:
        return missing_module_message(*missing)
    if any("Cannot create index on db != 0" in str(link) for link in exception_chain(exc)):
        return INDEX_ON_DATABASE_ZERO
    return None
