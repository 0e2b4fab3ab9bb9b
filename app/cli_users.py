"""`medbanana users …`: accounts and API tokens from the shell."""

import sys

import typer
from rich.console import Console
from rich.table import Table
from sqlmodel import Session, col, select

from app.db import make_engine, migrate
from app.models import Role, User
from app.settings import get_settings
from app.users import (
    UserError,
    create_user,
    describe_user,
    find_user,
    issue_token,
    reset_demo_accounts,
)

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


@users_cli.command("token")
def token(name: str) -> None:
    """Print a new API token for NAME (send it as 'Authorization: Bearer …'); it is shown once."""
    with _session() as session:
        user = find_user(session, name)
        if user is None:
            console.print(f"error: no user named {name!r}", markup=False)
            raise typer.Exit(1)
        print(issue_token(session=session, user=user))


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
    table = Table("name", "role", "demo", "created (UTC)")
    with _session() as session:
        for user in session.exec(select(User).order_by(col(User.name))):
            table.add_row(user.name, user.role, "yes" if user.is_demo else "",
                          user.created_at.strftime("%Y-%m-%d %H:%M"))
    Console().print(table)


def demo_users() -> None:
    """Create the demo admin and two demo readers, or give them new passwords, and print them."""
    table = Table("name", "role", "password", title="Demo accounts (new passwords each time)")
    with _session() as session:
        for user, password in reset_demo_accounts(session):
            table.add_row(user.name, user.role, password)
    Console().print(table)
