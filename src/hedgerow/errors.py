"""Exceptions raised for bad input.

Every error a user can cause derives from :class:`HedgerowError`; the CLI turns
it into one line on stderr and a non-zero exit status, never a traceback.
"""


class HedgerowError(Exception):
    """Base class of every user-facing error."""


class ParameterError(HedgerowError, ValueError):
    """A protocol, workload or metric parameter is invalid."""


class SpecError(HedgerowError, ValueError):
    """An experiment spec is invalid; the message names the key path."""


class DataError(HedgerowError):
    """A data file is missing or malformed; the message names file and line."""
