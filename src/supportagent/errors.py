"""The two families of failure: the user's mistake and the model's misbehaviour.

The CLI and the web layer translate these into one clear line / a 4xx; nothing else should
reach a user as a traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """Something the user can fix: a bad file, an unknown id, a missing setting."""


class NotFoundError(UserError):
    """An id that names nothing in the store."""


class ConflictError(UserError):
    """A request that contradicts the current state (a second review of the same draft)."""


class ModelError(Exception):
    """A model misbehaved: unparseable reply, invented citation, refused output."""

    def __init__(self, message: str, reason_code: str = "model_output_invalid") -> None:
        super().__init__(message)
        self.reason_code = reason_code
