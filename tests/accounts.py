"""Test accounts, made fast: one argon2 hash for the whole run instead of one per test."""

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.accounts.users import _hasher, issue_token
from app.models import Role, User

PASSWORD = "correct horse battery staple"
_HASH = _hasher.hash(PASSWORD)


def add_user(engine: Engine, name: str = "test-admin", role: Role = Role.admin) -> User:
    with Session(engine) as session:
        user = User(name=name, role=role.value, password_hash=_HASH)
        session.add(user)
        session.commit()
        session.refresh(user)
        return user


def token_client(app: FastAPI, engine: Engine, name: str = "test-admin",
                 role: Role = Role.admin, *, raise_server_exceptions: bool = True) -> TestClient:
    """A client that sends a bearer token of a new account with ``role``."""
    user = add_user(engine, name, role)
    with Session(engine) as session:
        token = issue_token(session=session, user=user)
    return TestClient(app, headers={"Authorization": f"Bearer {token}"},
                      raise_server_exceptions=raise_server_exceptions)


def login(client: TestClient, name: str = "test-admin", password: str = PASSWORD) -> None:
    """Log ``client`` in through the form, as a browser would (CSRF token included)."""
    page = client.get("/login")
    token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    response = client.post("/login", data={"name": name, "password": password,
                                           "csrf_token": token}, follow_redirects=False)
    assert response.status_code == 303, response.text
