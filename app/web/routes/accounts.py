"""Admins: accounts in the browser (add, reset a password shown once, deactivate, describe a
reader's qualification) and the audit log of every such action."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field
from sqlmodel import Session
from starlette.datastructures import FormData

from app.accounts.audit import audit_log
from app.accounts.users import (
    UserError,
    all_accounts,
    create_user,
    deactivate_user,
    demo_password,
    describe_user,
    get_user,
    reactivate_user,
    reset_password,
)
from app.models import Role
from app.web.deps import IdPath, SessionDep
from app.web.forms import posted_form, read_form
from app.web.security import AdminUser
from app.web.templating import redirect, render

router = APIRouter(include_in_schema=False)
AUDIT_PAGE = 100


class AccountForm(BaseModel):
    name: str = Field(max_length=64)
    role: Role = Role.reader
    # Blank: the app makes one and shows it once.
    password: str = Field("", max_length=200)


class QualificationForm(BaseModel):
    qualification: str = Field("", max_length=200)
    experience_years: int | None = Field(None, ge=0, le=70)
    board_certified: Literal["yes", "no", ""] = ""


def _page(request: Request, session: Session, status_code: int = 200, **context: Any) -> HTMLResponse:
    base = {"accounts": all_accounts(session), "roles": list(Role), "errors": {}, "typed": {},
            "shown_once": None, "qualification_errors": {}, "qualification_typed": {}}
    return render(request, "accounts/list.html", base | context, status_code=status_code)


@router.get("/accounts", response_class=HTMLResponse)
def accounts_page(request: Request, session: SessionDep) -> HTMLResponse:
    return _page(request, session)


@router.post("/accounts", response_class=HTMLResponse)
def add_account(request: Request, session: SessionDep, admin: AdminUser,
                form: Annotated[FormData, Depends(posted_form)]) -> HTMLResponse:
    posted = read_form(form, AccountForm)
    if posted.value is not None:
        password = posted.value.password or demo_password()
        try:
            user = create_user(session=session, name=posted.value.name.strip(), role=posted.value.role,
                               password=password, actor=admin)
        except UserError as error:
            posted = posted.refused(error)
        else:
            # The page, not a redirect: the password is on it once and is never stored in clear.
            return _page(request, session, status_code=201, shown_once=(user, password, "created"))
    typed = {k: v for k, v in posted.fields.items() if k != "password"}
    return _page(request, session, status_code=422, errors=posted.errors, typed=typed)


@router.post("/accounts/{user_id}/password", response_class=HTMLResponse)
def reset_account_password(request: Request, session: SessionDep, admin: AdminUser,
                           user_id: IdPath) -> HTMLResponse:
    user = get_user(session, user_id)
    password = reset_password(session=session, user=user, actor=admin)
    return _page(request, session, shown_once=(user, password, "reset"))


@router.post("/accounts/{user_id}/deactivate")
def deactivate_account(request: Request, session: SessionDep, admin: AdminUser, user_id: IdPath) -> Response:
    deactivate_user(session=session, user=get_user(session, user_id), actor=admin)
    return redirect(request, f"/accounts#account-{user_id}")


@router.post("/accounts/{user_id}/reactivate")
def reactivate_account(request: Request, session: SessionDep, admin: AdminUser, user_id: IdPath) -> Response:
    reactivate_user(session=session, user=get_user(session, user_id), actor=admin)
    return redirect(request, f"/accounts#account-{user_id}")


@router.post("/accounts/{user_id}/qualification", response_class=HTMLResponse)
def describe_account(request: Request, session: SessionDep, admin: AdminUser, user_id: IdPath,
                     form: Annotated[FormData, Depends(posted_form)]) -> Response:
    user = get_user(session, user_id)
    posted = read_form(form, QualificationForm)
    if posted.value is not None:
        given = posted.value
        try:
            certified = None if not given.board_certified else given.board_certified == "yes"
            describe_user(session=session, user=user, qualification=given.qualification,
                          experience_years=given.experience_years, replace_all=True,
                          board_certified=certified, actor=admin)
            return redirect(request, f"/accounts#account-{user_id}")
        except UserError as error:
            posted = posted.refused(error)
    return _page(request, session, status_code=422,
                 qualification_errors={user_id: posted.errors}, qualification_typed={user_id: posted.fields})


@router.get("/accounts/audit", response_class=HTMLResponse)
def audit_page(request: Request, session: SessionDep,
               page: Annotated[int, Query(ge=1, le=1_000_000)] = 1) -> HTMLResponse:
    lines, total = audit_log(session, limit=AUDIT_PAGE, offset=(page - 1) * AUDIT_PAGE)
    return render(request, "accounts/audit.html", {"lines": lines, "total": total, "page": page,
                                                   "pages": max(1, -(-total // AUDIT_PAGE))})
