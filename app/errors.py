"""The domain's errors, one family: what went wrong in words a user can act on. Domain code
raises them; the web edge's one error renderer (app/web/errors.py) gives each kind its
status, and the CLI prints the message. No route translates them by hand."""


class DomainError(Exception):
    """The message is shown as it is: it must name what was asked for, never a secret."""


class NotFound(DomainError, LookupError):
    """What was asked for does not exist, or is not this user's to know of (404)."""


class Forbidden(DomainError, PermissionError):
    """It exists, and this user may not do this with it (403)."""


class Conflict(DomainError):
    """The request is well formed, but the state of things refuses it (409)."""


class Invalid(DomainError, ValueError):
    """The values given cannot be used; the message says which and why (422). ``field``
    names the form field at fault, so a form shows the message beside it."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field
