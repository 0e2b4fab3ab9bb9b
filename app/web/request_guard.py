"""Before any route: no NUL characters in the path, query or a text body, and request bodies
never read for a caller who is not logged in, nor larger than a cap.

NUL cannot be stored in PostgreSQL text (it was a 500 there, and fine on SQLite); no field of
this app has a use for it, so it is refused at the door for both databases alike.

FastAPI reads a route's form or JSON before its dependencies run, so the login check would
come after the whole body was in memory (a 300 MB PUT once grew the server by 1.3 GB before
its 401). This middleware sits inside the session middleware and wraps ``receive``: the first
read of a body fails at once with 401 when the request carries neither a session user nor a
bearer token, and with 413 when the declared or the streamed size passes the cap. The
exceptions are HTTPExceptions raised while FastAPI reads the body, so they reach the app's
one error renderer like any other.

A multipart body is read whole here (no route takes a file, and a form is small), parsed
by the parser the routes use, and every name and value it yields is checked before the app
sees it: what is checked is exactly what a route would store. Media types are compared
without regard to case, as HTTP has them.
"""

from collections.abc import AsyncGenerator

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.web.security import SESSION_USER
from app.web.templating import path_in_app

# The largest body a page sends is a reading draft or an answer with a freehand region and a
# comment: tens of KB. A megabyte leaves room and keeps a flood of bodies cheap.
MAX_BODY_BYTES = 1024 * 1024
# Bodies sent before logging in (the login form) are tiny.
PUBLIC_BODY_BYTES = 16 * 1024
PUBLIC_PATHS = frozenset({"/login"})
NO_BODY_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
NUL_MESSAGE = "text may not contain NUL characters"
# NUL as a form encodes it, as JSON escapes it, and raw.
_NUL_FORMS = (b"%00", b"\\u0000", b"\x00")


class RequestGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if "\x00" in scope["path"] or b"%00" in scope.get("query_string", b""):
            await JSONResponse({"detail": NUL_MESSAGE, "status": 422}, 422)(scope, receive, send)
            return
        if scope["method"] in NO_BODY_METHODS:
            await self.app(scope, receive, send)
            return
        path = path_in_app(scope)
        public = path in PUBLIC_PATHS
        limit = PUBLIC_BODY_BYTES if public else MAX_BODY_BYTES
        signed_in = public or _has_credentials(scope)
        declared = _content_length(scope)
        media = _media_type(scope)
        textual = media.startswith(TEXT_MEDIA)
        received = 0
        tail = b""  # the end of the previous chunk: a "%00" may be split between two

        async def guarded() -> Message:
            nonlocal received, tail
            if not signed_in:
                raise HTTPException(401, "log in first, or send an API token as "
                                         "'Authorization: Bearer …'",
                                    headers={"WWW-Authenticate": "Bearer"})
            if declared is not None and declared > limit:
                raise HTTPException(413, f"the request body is larger than {limit} bytes")
            message = await receive()
            if message["type"] == "http.request":
                body = message.get("body", b"")
                received += len(body)
                if received > limit:
                    raise HTTPException(413, f"the request body is larger than {limit} bytes")
                if textual and _has_nul(tail + body):
                    raise HTTPException(422, NUL_MESSAGE)
                tail = body[-5:]
            return message

        await self.app(scope, _checked_multipart(scope, guarded)
                       if media.startswith("multipart/") else guarded, send)


def _has_credentials(scope: Scope) -> bool:
    """A session that names a user, or a bearer token; whether they are valid is the
    routes' check (app/web/security.py), which runs next with the body capped."""
    session = scope.get("session") or {}
    if isinstance(session.get(SESSION_USER), int):
        return True
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value[:7].lower() == b"bearer ":
            return True
    return False


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


TEXT_MEDIA = ("application/x-www-form-urlencoded", "application/json", "text/")


def _media_type(scope: Scope) -> str:
    for name, value in scope.get("headers", []):
        if name == b"content-type":
            return value.decode("latin-1").strip().lower()
    return ""


def _checked_multipart(scope: Scope, receive: Receive) -> Receive:
    """At the app's first read: the whole multipart body (through the guard's caps), decoded
    as the routes will decode it, with a NUL refused in any name or value; then the body,
    unchanged, to the app. Raised while the app reads, so the one error renderer answers."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()  # a disconnect, as the server reports it
        sent = True
        body = await _whole_body(receive)
        await _refuse_nul_in_form(scope, body)
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _whole_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _refuse_nul_in_form(scope: Scope, body: bytes) -> None:
    async def stream() -> AsyncGenerator[bytes, None]:
        yield body

    try:
        form = await MultiPartParser(Headers(scope=scope), stream()).parse()
    except MultiPartException as error:
        raise HTTPException(400, f"the form could not be read: {error.message}") from None
    try:
        for key, value in form.multi_items():
            texts = [key, value] if isinstance(value, str) else [key, value.filename or ""]
            if any("\x00" in text for text in texts):
                raise HTTPException(422, NUL_MESSAGE)
    finally:
        await form.close()


def _has_nul(data: bytes) -> bool:
    return any(form in data for form in _NUL_FORMS)
