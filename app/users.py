"""Accounts: argon2 password hashes, roles, and bearer tokens stored only as hashes."""

import hashlib
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.models import ApiToken, Role, User

_hasher = PasswordHasher()
# Long enough to resist guessing, short enough to type from a printed demo sheet.
DEMO_PASSWORD_BYTES = 12
MIN_PASSWORD_LENGTH = 8
NAME_PATTERN_HINT = "letters, digits, '.', '_' or '-', at most 64"


class UserError(ValueError):
    """A request about users that cannot be honoured; the message says why."""


def _check_name(name: str) -> None:
    if not (0 < len(name) <= 64) or not all(c.isalnum() or c in "._-" for c in name):
        raise UserError(f"user name {name!r} must be {NAME_PATTERN_HINT} characters")


def create_user(*, session: Session, name: str, role: Role, password: str,
                is_demo: bool = False) -> User:
    _check_name(name)
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UserError(f"the password must have at least {MIN_PASSWORD_LENGTH} characters")
    user = User(name=name, role=role.value, password_hash=_hasher.hash(password), is_demo=is_demo)
    session.add(user)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise UserError(f"a user named {name!r} already exists") from None
    session.refresh(user)
    return user


def set_password(*, session: Session, user: User, password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UserError(f"the password must have at least {MIN_PASSWORD_LENGTH} characters")
    user.password_hash = _hasher.hash(password)
    session.add(user)
    session.commit()


def find_user(session: Session, name: str) -> User | None:
    return session.exec(select(User).where(col(User.name) == name)).first()


def authenticate(session: Session, name: str, password: str) -> User | None:
    """The user when the password matches; None otherwise (same answer for an unknown name)."""
    user = find_user(session, name)
    if user is None:
        _hasher.hash(password)  # spend the same time, so timing does not reveal names
        return None
    try:
        _hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        return None
    if _hasher.check_needs_rehash(user.password_hash):
        set_password(session=session, user=user, password=password)
    return user


def _token_hash(token: str) -> str:
    # Tokens are 256 random bits, so a plain hash is enough; argon2 would slow every request.
    return hashlib.sha256(token.encode()).hexdigest()


def issue_token(*, session: Session, user: User) -> str:
    """A new bearer token for ``user``; only its hash is kept, so this is the one chance to see it."""
    assert user.id is not None
    token = secrets.token_urlsafe(32)
    session.add(ApiToken(user_id=user.id, token_hash=_token_hash(token)))
    session.commit()
    return token


def user_for_token(session: Session, token: str) -> User | None:
    found = session.exec(select(ApiToken).where(col(ApiToken.token_hash) == _token_hash(token))).first()
    return session.get(User, found.user_id) if found else None


def demo_password() -> str:
    return secrets.token_urlsafe(DEMO_PASSWORD_BYTES)


DEMO_ACCOUNTS = (("demo-admin", Role.admin), ("demo-reader-1", Role.reader),
                 ("demo-reader-2", Role.reader))


def reset_demo_accounts(session: Session) -> list[tuple[User, str]]:
    """Create the demo admin and readers, or give them new passwords; returns the passwords."""
    result = []
    for name, role in DEMO_ACCOUNTS:
        password = demo_password()
        user = find_user(session, name)
        if user is None:
            user = create_user(session=session, name=name, role=role, password=password,
                               is_demo=True)
        else:
            set_password(session=session, user=user, password=password)
        result.append((user, password))
    return result


def describe_user(*, session: Session, user: User, qualification: str | None,
                  experience_years: int | None, replace_all: bool = False) -> User:
    """Record what a study report says of a reader: qualification and years of experience.
    None leaves a field as it is (the command line sets one at a time), unless
    ``replace_all``: a form sends both fields, and a blank one clears it."""
    if qualification is not None or replace_all:
        qualification = (qualification or "").strip()
        if len(qualification) > 200:
            raise UserError("describe the qualification in at most 200 characters")
        user.qualification = qualification or None
    if experience_years is not None or replace_all:
        if experience_years is not None and not 0 <= experience_years <= 70:
            raise UserError("years of experience must be between 0 and 70")
        user.experience_years = experience_years
    session.add(user)
    session.commit()
    session.refresh(user)
    return user
