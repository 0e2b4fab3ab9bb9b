"""`medbanana users …`: accounts and API tokens from the shell."""

import sys
from datetime import datetime
from typing import NoReturn

import typer
from rich.console import Console
from rich.table import Table
from sqlmodel import Session, col, select

from app.accounts.users import (
    MAX_TOKEN_LIFETIME_DAYS,
    TOKEN_LIFETIME_DAYS,
    UserError,
    create_user,
    deactivate_user,
    describe_user,
    find_user,
    issue_token,
    reactivate_user,
    reset_demo_accounts,
    revoke_token,
    set_password,
    tokens_of,
)
from app.db import make_engine, migrate
from app.models import Role, User
from app.settings import get_settings

users_cli = typer.Typer(no_args_is_help=True, help="Accounts and API tokens.")
console = Console(stderr=True)


def _session() -> Session:
    engine = make_engine(get_settings().resolved_database_url())
    migrate(engine)
    return Session(engine)


def _read_password() -> str:
    if sys.stdin.isatty():
        return str(typer.prompt("password", hide_input=True, confirmation_prompt=True))
    return sys.stdin.readline().rstrip("\n")


@users_cli.command("add")
def add(name: str, role: Role = typer.Option(..., "--role", help="admin or reader")) -> None:
    """Add an account; the password is read from standard input or a prompt."""
    password = _read_password()
    with _session() as session:
        try:
            create_user(session=session, name=name, role=role, password=password)
        except UserError as error:
            console.print(f"error: {error}", markup=False)
            raise typer.Exit(1) from None
    console.print(f"added {role.value} {name}", markup=False)


def _user(session: Session, name: str) -> User:
    user = find_user(session, name)
    if user is None:
        console.print(f"error: no user named {name!r}", markup=False)
        raise typer.Exit(1)
    return user


def _fail(error: UserError) -> NoReturn:
    console.print(f"error: {error}", markup=False)
    raise typer.Exit(1) from None


@users_cli.command("token")
def token(
    name: str,
    label: str = typer.Option("", "--name", help="What the token is for, e.g. 'nightly export'."),
    expires_days: int = typer.Option(TOKEN_LIFETIME_DAYS, "--expires-days",
                                     help=f"Days until it stops working (1 to {MAX_TOKEN_LIFETIME_DAYS})."),
) -> None:
    """Print a new API token for NAME (send it as 'Authorization: Bearer …'); it is shown once."""
    with _session() as session:
        try:
            print(issue_token(session=session, user=_user(session, name), name=label,
                              expires_in_days=expires_days))
        except UserError as error:
            _fail(error)


@users_cli.command("tokens")
def tokens(name: str) -> None:
    """List NAME's tokens: id, name, made, expires, last used, revoked (never the token)."""
    table = Table("id", "name", "created (UTC)", "expires (UTC)", "last used (UTC)", "revoked (UTC)")
    with _session() as session:
        for found in tokens_of(session, _user(session, name)):
            table.add_row(str(found.id), found.name, *(_when(moment) for moment in (
                found.created_at, found.expires_at, found.last_used_at, found.revoked_at)))
    Console().print(table)


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment else ""


@users_cli.command("revoke")
def revoke(token_id: int = typer.Argument(..., help="The token's id (medbanana users tokens NAME).")) -> None:
    """Revoke a token: it stops working at once."""
    with _session() as session:
        try:
            revoke_token(session=session, token_id=token_id)
        except UserError as error:
            _fail(error)
    console.print(f"revoked token {token_id}", markup=False)


@users_cli.command("passwd")
def passwd(name: str) -> None:
    """Set NAME's password (standard input or a prompt); every session of NAME ends."""
    password = _read_password()
    with _session() as session:
        try:
            set_password(session=session, user=_user(session, name), password=password)
        except UserError as error:
            _fail(error)
    console.print(f"password of {name} changed; its sessions have ended", markup=False)


@users_cli.command("deactivate")
def deactivate(name: str) -> None:
    """End NAME's access: sessions and tokens stop working. Answers stay theirs; accounts are
    never deleted, so an id never passes to somebody else."""
    with _session() as session:
        try:
            deactivate_user(session=session, user=_user(session, name))
        except UserError as error:
            _fail(error)
    console.print(f"deactivated {name}", markup=False)


@users_cli.command("activate")
def activate(name: str) -> None:
    """Let a deactivated account log in again (with a new password: users passwd)."""
    with _session() as session:
        try:
            reactivate_user(session=session, user=_user(session, name))
        except UserError as error:
            _fail(error)
    console.print(f"activated {name}", markup=False)


@users_cli.command("describe")
def describe(
    name: str,
    qualification: str | None = typer.Option(None, "--qualification",
                                             help='e.g. "consultant radiologist, board certified"'),
    experience_years: int | None = typer.Option(None, "--experience-years", help="years reading images"),
) -> None:
    """Record a reader's qualification and experience, as study reports state them."""
    with _session() as session:
        user = find_user(session, name)
        if user is None:
            console.print(f"error: no user named {name!r}", markup=False)
            raise typer.Exit(1)
        try:
            describe_user(session=session, user=user, qualification=qualification,
                          experience_years=experience_years)
        except UserError as error:
            console.print(f"error: {error}", markup=False)
            raise typer.Exit(1) from None
    console.print(f"described {name}", markup=False)


@users_cli.command("list")
def list_users() -> None:
    """List the accounts."""
    table = Table("id", "name", "role", "active", "demo", "created (UTC)")
    with _session() as session:
        for user in session.exec(select(User).order_by(col(User.name))):
            table.add_row(str(user.id), user.name, user.role, "yes" if user.active else "no",
                          "yes" if user.is_demo else "", _when(user.created_at))
    Console().print(table)


def demo_users() -> None:
    """Create the demo admin and two demo readers, or give them new passwords, and print them;
    and the locked pilot study of synthetic readers whose settled cases let practice,
    known-answer cases and qualification be tried (app/demo/pilot.py)."""
    from app.demo.pilot import make_pilot

    table = Table("name", "role", "password", title="Demo accounts (new passwords each time)")
    with _session() as session:
        accounts = reset_demo_accounts(session)
        for user, password in accounts:
            table.add_row(user.name, user.role, password)
        admin = next(user for user, _ in accounts if user.role == Role.admin)
        pilot = make_pilot(session, admin)
    Console().print(table)
    if pilot is not None:
        Console().print(f"Locked pilot study {pilot.name!r} (synthetic readers): its settled "
                        "cases are in the known-answer pool.")
