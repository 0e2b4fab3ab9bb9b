"""Logging in and out, and the API docs (which, like every page, need an account)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts.login_throttle import LoginLocked, LoginRefused, log_in
from app.accounts.users import end_sessions, find_user
from app.models import Role, User
from app.web.deps import SessionDep, SettingsDep
from app.web.device_cookie import device_of, remember_device
from app.web.json_response import StrictJSONResponse
from app.web.security import check_csrf, current_user, require_admin, safe_next, start_session
from app.web.templating import redirect, render

router = APIRouter(include_in_schema=False)


@router.get("/")
def home(request: Request, user: Annotated[User, Depends(current_user)]) -> RedirectResponse:
    return redirect(request, "/cases" if user.role == Role.admin else "/read")


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/") -> HTMLResponse:
    return render(request, "accounts/login.html", {"next": safe_next(next), "error": None, "name": ""})


@router.post("/login", response_class=HTMLResponse, dependencies=[Depends(check_csrf)])
def login(request: Request, session: SessionDep, settings: SettingsDep,
          name: Annotated[str, Form(max_length=64)],
          password: Annotated[str, Form(max_length=1024)],
          next: Annotated[str, Form(max_length=2000)] = "/") -> Response:
    context = {"next": safe_next(next), "name": name}
    device = device_of(request, settings, find_user(session, name))
    try:
        user = log_in(session, name, password, request.client.host if request.client else None,
                      device)
    except LoginLocked as locked:
        response = render(request, "accounts/login.html", {**context, "error": str(locked)},
                          status_code=429)
        response.headers["Retry-After"] = str(locked.seconds)
        return response
    except LoginRefused as refused:
        return render(request, "accounts/login.html", {**context, "error": str(refused)},
                      status_code=401)
    start_session(request, user)
    answer = redirect(request, safe_next(next))
    remember_device(request, answer, settings, user, device)
    return answer


@router.post("/logout")
def logout(request: Request, session: SessionDep,
           user: Annotated[User, Depends(current_user)]) -> RedirectResponse:
    """Ends every session of the account, not only this browser's: a copied cookie dies too."""
    end_sessions(session=session, user=user)
    request.session.clear()
    return redirect(request, "/login")


@router.get("/docs", response_class=HTMLResponse, dependencies=[Depends(require_admin)])
def api_docs(request: Request) -> HTMLResponse:
    """Swagger UI from vendored files (FastAPI's own page loads it from a CDN)."""
    return render(request, "docs/swagger.html", {})


@router.get("/openapi.json", dependencies=[Depends(require_admin)])
def openapi_schema(request: Request) -> StrictJSONResponse:
    return StrictJSONResponse(request.app.openapi())
