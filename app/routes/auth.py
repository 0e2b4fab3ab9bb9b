"""Logging in and out, and the API docs (which, like every page, need an account)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from app.deps import SessionDep
from app.models import Role, User
from app.security import SESSION_USER, check_csrf, current_user, require_admin, safe_next
from app.users import authenticate
from app.web import render

router = APIRouter(include_in_schema=False)


@router.get("/")
def home(user: Annotated[User, Depends(current_user)]) -> RedirectResponse:
    return RedirectResponse("/cases" if user.role == Role.admin else "/read", status_code=303)


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/") -> HTMLResponse:
    return render(request, "auth/login.html", {"next": safe_next(next), "error": None, "name": ""})


@router.post("/login", response_class=HTMLResponse, dependencies=[Depends(check_csrf)])
def login(request: Request, session: SessionDep, name: Annotated[str, Form(max_length=64)],
          password: Annotated[str, Form(max_length=1024)],
          next: Annotated[str, Form(max_length=2000)] = "/") -> Response:
    user = authenticate(session, name, password)
    if user is None:
        context = {"next": safe_next(next), "name": name,
                   "error": "That name and password do not match an account."}
        return render(request, "auth/login.html", context, status_code=401)
    # A fresh session on login, so a session id planted before it is worthless.
    request.session.clear()
    request.session[SESSION_USER] = user.id
    return RedirectResponse(safe_next(next), status_code=303)


@router.post("/logout", dependencies=[Depends(current_user)])
def logout(request: Request) -> RedirectResponse:
    request.session.clear()
    return RedirectResponse("/login", status_code=303)


@router.get("/docs", response_class=HTMLResponse, dependencies=[Depends(require_admin)])
def api_docs() -> HTMLResponse:
    return get_swagger_ui_html(openapi_url="/openapi.json", title="MedBanana Review API")


@router.get("/openapi.json", dependencies=[Depends(require_admin)])
def openapi_schema(request: Request) -> JSONResponse:
    return JSONResponse(request.app.openapi())
