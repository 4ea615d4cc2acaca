"""The run's verdict: its status and message, decided on what the run saw (:class:`RunFacts`), and set
on the summary in one place (:func:`decide`): a fact learnt late (an interrupt after the judging,
reports that could not be written) is one more fact of a new decision, never a rewrite of the status.

:func:`verdict` is pure, so every branch is a unit test (``tests/unit/test_verdict.py``). The order is
the precedence: a run stopped before any scenario could start (why, or the interrupt that ended it),
a run cut off by its deadline, then one the runner stopped before it could judge the store (a usage
or Redis error, or a store that made the server unusable), an interrupt, the suite's own files
failing to load, a worker that could not run the store, nothing selected or nothing run, and only
then the scenarios' outcomes: a failure of the store's fails the run; scenarios that judged nothing
(errors: the suite's own code failed) with no failure beside them are a suite error, which says
the store was not judged. Reports that could not all be written make any of these a report error,
whose message carries it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from pytest import ExitCode as PytestExit

from ..reports.renderings import unwritten_verdict
from ..reports.results import Outcome, RunSummary, Status
from ..channel.messages import Abort


@dataclass(frozen=True)
class RunFacts:
    summary: RunSummary                          # the scenarios' results, and the engines
    exitstatus: int                              # pytest's
    collected: int = 0                           # the scenarios pytest collected
    run_timeout: float | None = None             # the --run-timeout that passed, if it did
    stopped: tuple[Status, str] | None = None    # why the runner stopped before judging the store
    interrupted_by: str | None = None            # the signal that interrupted the run (SIGINT, SIGTERM)
    collection_errors: tuple[str, ...] = ()      # the suite's files that could not be loaded
    aborts: tuple[Abort, ...] = ()               # workers that could not run the store
    started: bool = True                         # pytest began the run (else it stopped before any scenario)
    unwritten: tuple[str, ...] = ()              # the files that could not be written, each with why


def decide(summary: RunSummary, facts: RunFacts, phrase: Callable[[str], str] = lambda text: text) -> None:
    """Set ``summary``'s status and message from ``facts``: the one place they are set; ``phrase``
    names the options in the message as the user gave them (an action's inputs)."""
    status, message = verdict(facts)
    summary.status, summary.message = status, phrase(message) if message else message


def verdict(facts: RunFacts) -> tuple[Status, str | None]:
    status, message = _judged(facts)
    if facts.unwritten:
        found = replace(facts.summary, status=status, message=message)
        return Status.REPORT_ERROR, unwritten_verdict(found, list(facts.unwritten))
    return status, message


def _judged(facts: RunFacts) -> tuple[Status, str | None]:
    summary, exitstatus = facts.summary, facts.exitstatus
    if not facts.started:   # stopped before pytest began: why, unless an interrupt ended it
        if facts.interrupted_by or not facts.stopped:
            how = f" by {facts.interrupted_by}" if facts.interrupted_by else ""
            return Status.INTERRUPTED, f"the run was interrupted{how} before any scenario ran"
        return facts.stopped
    if facts.run_timeout is not None:
        return Status.DID_NOT_FINISH, (f"the run did not finish within --run-timeout {facts.run_timeout:g} s: "
                                       "it was cut off, and the results below are partial")
    if facts.stopped:
        return facts.stopped
    if facts.interrupted_by or (exitstatus == PytestExit.INTERRUPTED and not summary.failures()):
        how = f" by {facts.interrupted_by}" if facts.interrupted_by else ""
        return Status.INTERRUPTED, f"the run was interrupted{how}; the results below are partial"
    if facts.collection_errors:
        return Status.SUITE_ERROR, ("the suite's own files could not be loaded (a broken installation?):\n"
                                    + "\n".join(facts.collection_errors)[-3000:])
    if facts.aborts:
        return Status(facts.aborts[0].status), facts.aborts[0].message
    if exitstatus == PytestExit.NO_TESTS_COLLECTED:
        return Status.USAGE_ERROR, "no scenario was selected: check the -k expression"
    if not summary.results:
        return Status.NOT_RUN, (f"{facts.collected} scenarios were collected and none was run "
                                "(--collect-only, or an option that runs nothing): nothing was checked")
    if all(r.outcome is Outcome.SKIPPED for r in summary.results):
        return Status.NOT_RUN, ("every selected scenario was skipped, as the store lacks their capabilities "
                                "(see the reasons): nothing was checked")
    if exitstatus in (PytestExit.OK, PytestExit.TESTS_FAILED, PytestExit.INTERRUPTED):
        if not summary.failures():
            return Status.PASSED, None
        # -x or --maxfail stopped it at a failure (an interrupt without one was told above)
        cut = ": the run stopped there (-x or --maxfail), later scenarios did not run" \
            if exitstatus == PytestExit.INTERRUPTED else ""
        if not any(r.outcome is Outcome.FAILED for r in summary.results):
            errors = summary.failures()
            return Status.SUITE_ERROR, (
                f"{len(errors)} scenario{'s' if len(errors) > 1 else ''} judged nothing, and none found a fault of "
                f"the store: {errors[0].nodeid}: {errors[0].message or 'its setup or teardown failed'}"
                + ("; ..." if len(errors) > 1 else "") + cut)
        if cut:
            return Status.FAILED, "the run stopped at the first failures (-x or --maxfail): later scenarios did not run"
        differences = summary.engine_differences() if summary.engines else []
        if differences:
            first = differences[0]
            return Status.FAILED, (f"the engines differ on {len(differences)} scenarios: {first['case']} "
                                   f"{first['message']}" + ("; ..." if len(differences) > 1 else ""))
        return Status.FAILED, None
    return Status.USAGE_ERROR, f"pytest stopped with exit status {exitstatus}"
