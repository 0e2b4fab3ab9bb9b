"""Who is asking: a signed session cookie or a bearer token, and CSRF for cookie sessions."""

import hmac
import secrets
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from sqlmodel import Session

from app.accounts.users import user_for_token
from app.importer.history import has_synthetic_data
from app.models import Role, User
from app.web.deps import SessionDep

SESSION_USER = "user_id"
# The account's session nonce when the cookie was made; logout and a password change replace
# it, so every earlier cookie, copies included, stops working.
SESSION_NONCE = "nonce"
SESSION_CSRF = "csrf"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class NotAuthenticated(Exception):
    """No valid session or token: browsers go to the login page, scripts get a 401."""


def csrf_token(request: Request) -> str:
    """This session's CSRF token, made on first use (also for the login form)."""
    token = request.session.get(SESSION_CSRF)
    if not token:
        token = secrets.token_urlsafe(32)
        request.session[SESSION_CSRF] = token
    return str(token)


async def check_csrf(request: Request) -> None:
    """State changes from a cookie session must carry the session's token (header or field)."""
    if request.method not in UNSAFE_METHODS:
        return
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and "form" in request.headers.get("content-type", ""):
        sent = str((await request.form()).get(CSRF_FIELD, ""))
    expected = request.session.get(SESSION_CSRF, "")
    if not sent or not expected or not hmac.compare_digest(sent, expected):
        raise HTTPException(403, "the form or request is missing its security token; "
                                 "reload the page and try again")


async def session_csrf(request: Request) -> None:
    """CSRF for logged-in cookie sessions, checked before current_user touches the database.

    Async and free of database work, so that reading a form body never happens while the
    request holds a pooled connection: with every connection held by requests waiting for
    their bodies, the next request would block the event loop on the pool.
    """
    if _bearer(request) is None and isinstance(request.session.get(SESSION_USER), int):
        await check_csrf(request)


def _bearer(request: Request) -> str | None:
    authorization = request.headers.get("authorization", "")
    if authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return None


def current_user(request: Request, session: SessionDep,
                 _csrf: Annotated[None, Depends(session_csrf)]) -> User:
    # Sync, so FastAPI runs the database look-up in its thread pool, off the event loop.
    token = _bearer(request)
    if token is not None:
        user = user_for_token(session, token)
        if user is None:
            raise HTTPException(401, "the bearer token is not valid",
                                headers={"WWW-Authenticate": "Bearer"})
        # Tokens are not sent by browsers on their own, so they need no CSRF token.
        _remember(request, session, user)
        return user
    found = cookie_user(request, session)
    if found is None:
        request.session.pop(SESSION_USER, None)
        raise NotAuthenticated()
    _remember(request, session, found)
    return found


def cookie_user(request: Request, session: Session) -> User | None:
    """The active account the session cookie names, if its nonce is still current."""
    user_id = request.session.get(SESSION_USER)
    found = session.get(User, user_id) if isinstance(user_id, int) else None
    nonce = request.session.get(SESSION_NONCE)
    if (found is None or not found.active or not isinstance(nonce, str)
            or not hmac.compare_digest(nonce, found.session_nonce)):
        return None
    return found


def remember_cookie_user(request: Request) -> None:
    """For a page no route answered (an unknown address): who is logged in, so the page
    keeps its navigation. Runs in the thread pool; a failure only loses the navigation."""
    if getattr(request.state, "user", None) is not None or "session" not in request.scope:
        return
    with Session(request.app.state.engine) as session:
        found = cookie_user(request, session)
        if found is not None:
            _remember(request, session, found)


def start_session(request: Request, user: User) -> None:
    # A fresh session on login, so a session id planted before it is worthless.
    request.session.clear()
    request.session[SESSION_USER] = user.id
    request.session[SESSION_NONCE] = user.session_nonce


def _remember(request: Request, session: SessionDep, user: User) -> None:
    """What every page shows: who is logged in, and the banner while demo data is loaded.
    Looked up here, in the thread pool, so that rendering never touches the database."""
    request.state.user = user
    # For the request log, which runs after the session (and the user object) has closed.
    request.state.user_id = user.id
    request.state.synthetic = has_synthetic_data(session)


CurrentUser = Annotated[User, Depends(current_user)]


async def require_admin(user: CurrentUser) -> User:
    # Async: no I/O (see app/web/deps.py).
    if user.role != Role.admin:
        raise HTTPException(403, "this needs an admin account")
    return user


AdminUser = Annotated[User, Depends(require_admin)]


def safe_next(target: str | None) -> str:
    """Only a local path may follow a login, never another site."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"
