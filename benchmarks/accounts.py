"""A benchmark admin account on the benchmark database, made once and reused."""

import secrets

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.accounts.users import create_user, find_user, issue_token
from app.models import Role, User


def bench_user(engine: Engine, name: str, role: Role = Role.admin) -> User:
    with Session(engine) as session:
        user = find_user(session, name)
        if user is None:
            user = create_user(session=session, name=name, role=role,
                               password=secrets.token_urlsafe(16))
        return user


def bench_token(engine: Engine, name: str, role: Role = Role.admin) -> str:
    user = bench_user(engine, name, role)
    with Session(engine) as session:
        return issue_token(session=session, user=user)


def bench_admin_token(engine: Engine) -> str:
    return bench_token(engine, "bench-admin")
