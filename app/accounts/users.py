"""Accounts: argon2 password hashes, roles, and bearer tokens stored only as hashes."""

import hashlib
import logging
import secrets
import string
from datetime import timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import func
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.accounts.audit import note
from app.errors import Invalid, NotFound
from app.models import ApiToken, Role, User, as_utc, new_session_nonce, utcnow

logger = logging.getLogger(__name__)

_hasher = PasswordHasher()
# Long enough to resist guessing, short enough to type from a printed demo sheet.
DEMO_PASSWORD_BYTES = 12
MIN_PASSWORD_LENGTH = 8
NAME_PATTERN_HINT = "letters a-z, digits, '.', '_' or '-' (no accents or other scripts), at most 64"
# A token that leaks should stop working on its own; `users token --expires-days` changes it.
TOKEN_LIFETIME_DAYS = 90
MAX_TOKEN_LIFETIME_DAYS = 730
# last_used_at is written at most this often, so a busy script does not write on every call.
TOKEN_USE_RESOLUTION = timedelta(minutes=1)


def reader_accounts(session: Session) -> list[User]:
    """Every reader account, by name: who a study may be given to."""
    return list(session.scalars(select(User).where(col(User.role) == Role.reader)
                                .order_by(col(User.name))))


def get_user(session: Session, user_id: int) -> User:
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(f"no user with id {user_id}")
    return user


class UserError(Invalid):
    """A request about users that cannot be honoured; the message says why."""


# ASCII only: a name in any script can be spelt with letters that look like another's
# ("demo-adm" + a Cyrillic i + "n" beside "demo-admin"), and a reader chosen from a list, or
# an admin read in the audit log, must be the one it seems.
NAME_CHARACTERS = frozenset(string.ascii_letters + string.digits + "._-")


def _check_name(session: Session, name: str) -> None:
    if not (0 < len(name) <= 64) or not set(name) <= NAME_CHARACTERS:
        raise UserError(f"user name {name!r} must be {NAME_PATTERN_HINT} characters", field="name")
    # Names that differ only in case look alike too.
    taken = session.scalars(select(col(User.name)).where(
        func.lower(col(User.name)) == name.lower())).first()
    if taken is not None:
        raise UserError(f"a user named {taken!r} already exists; choose a name that does not "
                        "differ from it only in capitals", field="name")


def create_user(*, session: Session, name: str, role: Role, password: str,
                is_demo: bool = False, actor: User | None = None) -> User:
    _check_name(session, name)
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UserError(f"the password must have at least {MIN_PASSWORD_LENGTH} characters",
                        field="password")
    user = User(name=name, role=role.value, password_hash=_hasher.hash(password), is_demo=is_demo)
    session.add(user)
    try:
        session.flush()
        note(session, "account created", user, actor, f"role {role.value}")
        session.commit()
    except IntegrityError:
        session.rollback()
        raise UserError(f"a user named {name!r} already exists", field="name") from None
    session.refresh(user)
    return user


def set_password(*, session: Session, user: User, password: str,
                 end_sessions: bool = True, actor: User | None = None, audited: bool = True) -> None:
    """A new password; every session of the account ends with the old one. ``audited``
    False only for a rehash at login, which changes no password."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UserError(f"the password must have at least {MIN_PASSWORD_LENGTH} characters",
                        field="password")
    user.password_hash = _hasher.hash(password)
    if end_sessions:
        user.session_nonce = new_session_nonce()
    session.add(user)
    if audited:
        note(session, "password set", user, actor, "sessions ended" if end_sessions else "")
    session.commit()


def reset_password(*, session: Session, user: User, actor: User) -> str:
    """A new random password for an account, shown once to the admin who asked; the
    account's sessions end. Its tokens stay: they are revoked one by one or by deactivation."""
    if not user.active:
        raise UserError(f"{user.name} is deactivated: reactivate the account first")
    password = demo_password()
    set_password(session=session, user=user, password=password, actor=actor)
    logger.info("password of user %s (id %s) reset by %s", user.name, user.id, actor.name)
    return password


def end_sessions(*, session: Session, user: User) -> None:
    """Every cookie of the account stops working, copies included (logout does this)."""
    user.session_nonce = new_session_nonce()
    session.add(user)
    session.commit()


def deactivate_user(*, session: Session, user: User, actor: User | None = None) -> None:
    """The account can no longer log in or use its tokens; its answers stay attributed."""
    if not user.active:
        raise UserError(f"{user.name} is already deactivated")
    if actor is not None and actor.id == user.id:
        raise UserError("you cannot deactivate your own account; another admin can")
    user.active, user.deactivated_at = False, utcnow()
    user.session_nonce = new_session_nonce()
    now = utcnow()
    for token in session.exec(select(ApiToken).where(col(ApiToken.user_id) == user.id,
                                                     col(ApiToken.revoked_at).is_(None))):
        token.revoked_at = now
        session.add(token)
    session.add(user)
    note(session, "deactivated", user, actor, "sessions ended, tokens revoked")
    session.commit()
    logger.info("user %s (id %s) deactivated", user.name, user.id)


def reactivate_user(*, session: Session, user: User, actor: User | None = None) -> None:
    if user.active:
        raise UserError(f"{user.name} is active")
    user.active, user.deactivated_at = True, None
    session.add(user)
    note(session, "reactivated", user, actor)
    session.commit()
    logger.info("user %s (id %s) reactivated", user.name, user.id)


def find_user(session: Session, name: str) -> User | None:
    return session.exec(select(User).where(col(User.name) == name)).first()


def authenticate(session: Session, name: str, password: str) -> User | None:
    """The user when the password matches; None otherwise (same answer for an unknown name)."""
    user = find_user(session, name)
    if user is None or not user.active:
        _hasher.hash(password)  # spend the same time, so timing does not reveal names
        return None
    try:
        _hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        return None
    if _hasher.check_needs_rehash(user.password_hash):
        set_password(session=session, user=user, password=password, end_sessions=False,
                     audited=False)
    return user


def _token_hash(token: str) -> str:
    # Tokens are 256 random bits, so a plain hash is enough; argon2 would slow every request.
    return hashlib.sha256(token.encode()).hexdigest()


def issue_token(*, session: Session, user: User, name: str = "",
                expires_in_days: int = TOKEN_LIFETIME_DAYS, actor: User | None = None) -> str:
    """A new bearer token for ``user``; only its hash is kept, so this is the one chance to see it."""
    assert user.id is not None
    if not user.active:
        raise UserError(f"{user.name} is deactivated")
    if not 1 <= expires_in_days <= MAX_TOKEN_LIFETIME_DAYS:
        raise UserError(f"a token lives 1 to {MAX_TOKEN_LIFETIME_DAYS} days")
    if len(name) > 64:
        raise UserError("name the token in at most 64 characters")
    token = secrets.token_urlsafe(32)
    session.add(ApiToken(user_id=user.id, token_hash=_token_hash(token), name=name,
                         expires_at=utcnow() + timedelta(days=expires_in_days)))
    note(session, "token issued", user, actor, f"{name or 'unnamed'}, {expires_in_days} days")
    session.commit()
    return token


def user_for_token(session: Session, token: str) -> User | None:
    """The active account of a token that is neither revoked nor expired; its use is noted."""
    row = session.exec(select(ApiToken, User).join(User, col(User.id) == ApiToken.user_id)
                       .where(col(ApiToken.token_hash) == _token_hash(token))).first()
    if row is None:
        return None
    found, user = row  # one statement: every API call asks it
    now = utcnow()
    if found.revoked_at is not None or (found.expires_at is not None and as_utc(found.expires_at) <= now):
        return None
    if not user.active:
        return None
    if found.last_used_at is None or now - as_utc(found.last_used_at) >= TOKEN_USE_RESOLUTION:
        found.last_used_at = now
        session.add(found)
        session.commit()
    return user


def tokens_of(session: Session, user: User) -> list[ApiToken]:
    return list(session.exec(select(ApiToken).where(col(ApiToken.user_id) == user.id)
                             .order_by(col(ApiToken.id))))


def revoke_token(*, session: Session, token_id: int, actor: User | None = None) -> ApiToken:
    found = session.get(ApiToken, token_id)
    if found is None:
        raise UserError(f"no token with id {token_id}")
    if found.revoked_at is not None:
        raise UserError(f"token {token_id} is already revoked")
    found.revoked_at = utcnow()
    session.add(found)
    note(session, "token revoked", session.get(User, found.user_id), actor, f"token {token_id}")
    session.commit()
    logger.info("token %s of user id %s revoked", token_id, found.user_id)
    return found


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
            if not user.active:
                reactivate_user(session=session, user=user)
        result.append((user, password))
    return result


def describe_user(*, session: Session, user: User, qualification: str | None,
                  experience_years: int | None, replace_all: bool = False,
                  board_certified: bool | None = None, actor: User | None = None) -> User:
    """Record what a study report says of a reader: specialty or qualification, years of
    experience, board certification. None leaves a field as it is (the command line sets one
    at a time), unless ``replace_all``: a form sends every field, and a blank one clears it."""
    if qualification is not None or replace_all:
        qualification = (qualification or "").strip()
        if len(qualification) > 200:
            raise UserError("describe the qualification in at most 200 characters",
                            field="qualification")
        user.qualification = qualification or None
    if experience_years is not None or replace_all:
        if experience_years is not None and not 0 <= experience_years <= 70:
            raise UserError("years of experience must be between 0 and 70", field="experience_years")
        user.experience_years = experience_years
    if board_certified is not None or replace_all:
        user.board_certified = board_certified
    session.add(user)
    years = "-" if user.experience_years is None else user.experience_years
    note(session, "qualification recorded", user, actor, f"{user.qualification or '-'}; "
         f"{years} years; board certified: {_yes_no(user.board_certified)}")
    session.commit()
    session.refresh(user)
    return user


def _yes_no(value: bool | None) -> str:
    return "not recorded" if value is None else ("yes" if value else "no")


def all_accounts(session: Session) -> list[User]:
    """Every account, active first, then by name."""
    return list(session.scalars(select(User).order_by(col(User.active).desc(), col(User.name))))
