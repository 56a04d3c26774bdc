"""Exceptions raised for bad input.

Every error a user can cause derives from :class:`HedgerowError`; the CLI turns
it into one line on stderr and a non-zero exit status, never a traceback.
"""


class HedgerowError(Exception):
    """Base class of every user-facing error."""


class ParameterError(HedgerowError, ValueError):
    """A protocol, workload or metric parameter is invalid.

    ``key`` names the parameter when the error is about one (specs turn it
    into a key path such as ``scenario.params.kg``).
    """

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class SpecError(HedgerowError, ValueError):
    """An experiment spec is invalid; the message names the key path."""


class DataError(HedgerowError):
    """A data file is missing or malformed; the message names file and line."""


class MemoryDeferred(HedgerowError):
    """A run that fits the machine alone but not beside the runs now holding its memory.

    Raised, before anything large is allocated, only where runs share a machine
    through a memory ledger (:mod:`hedgerow.admission`); a sweep runs it again
    when one of those runs has ended.
    """
