"""The run's own exceptions, each with the exit status it ends a run with: imported from here by every
layer, so that raising one needs nothing else of the package."""


class UsageError(Exception):
    """Bad input, or a store outside the contract: exit status 2, with a message that says what to fix."""


class BackendError(Exception):
    """Redis could not be started or reached: exit status 3."""


class BackendUsageError(Exception):
    """A --redis choice the run cannot use as given (a bad list of engines, no Docker engine for an
    image): a usage error."""


class UnusableDatabase(BackendUsageError):
    """An external database the suite may not use as it is (it holds data, or the user may not flush
    it): a usage error."""
