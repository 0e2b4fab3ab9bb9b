"""Failed logins locked out by account and by address, with doubling back-off.

Kept in the database, so every server process (serve --workers N) counts the same failures.
A locked key is refused before its password is checked: a flood of guesses then costs no
argon2 hashing, and other users' pages stay fast.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from app.accounts.users import authenticate
from app.models import LoginThrottle, User, as_utc, utcnow

logger = logging.getLogger(__name__)

# Failures allowed before a lock: a person mistypes a few times; a shared hospital NAT
# address carries many people, so it gets more room than one account.
ACCOUNT_LIMIT = 5
ADDRESS_LIMIT = 30
FIRST_LOCK = timedelta(seconds=30)
MAX_LOCK = timedelta(minutes=15)
# Failures older than this, with no lock running, are forgotten.
WINDOW = timedelta(minutes=15)


class LoginRefused(Exception):
    """The name and password do not match an active account."""


class LoginLocked(Exception):
    def __init__(self, seconds: int) -> None:
        super().__init__(f"Too many failed logins. Try again in {seconds} seconds, or ask an "
                         "admin to check the account.")
        self.seconds = seconds


def log_in(session: Session, name: str, password: str, address: str | None) -> User:
    """The account, when it is not locked out and the password matches."""
    keys = keys_for(name, address)
    locked = seconds_locked(session, keys)
    if locked:
        raise LoginLocked(locked)
    user = authenticate(session, name, password)
    if user is None:
        record_failure(session, keys)
        logger.info("failed login for %r from %s", name[:64], address)
        raise LoginRefused("That name and password do not match an active account.")
    record_success(session, keys)
    logger.info("user %s (id %s) logged in from %s", user.name, user.id, address)
    return user


@dataclass(frozen=True)
class Key:
    value: str
    limit: int


def keys_for(name: str, address: str | None) -> list[Key]:
    keys = [Key(f"user:{name.lower()[:64]}", ACCOUNT_LIMIT)]
    if address:
        keys.append(Key(f"addr:{address[:100]}", ADDRESS_LIMIT))
    return keys


def seconds_locked(session: Session, keys: list[Key]) -> int:
    """How long the longest lock among ``keys`` still runs, in whole seconds (0: none)."""
    now, longest = utcnow(), 0.0
    for key in keys:
        row = session.get(LoginThrottle, key.value)
        if row is not None and row.locked_until is not None:
            longest = max(longest, (as_utc(row.locked_until) - now).total_seconds())
    return int(longest + 0.999) if longest > 0 else 0


def record_failure(session: Session, keys: list[Key]) -> None:
    now = utcnow()
    for key in keys:
        row = _row(session, key.value, now)
        if now - as_utc(row.window_start) > WINDOW and not _locked(row, now):
            row.failures, row.window_start = 0, now
        row.failures += 1
        if row.failures >= key.limit:
            # 30 s at the limit, doubling with each further failure, at most 15 minutes.
            lock = min(FIRST_LOCK * 2 ** (row.failures - key.limit), MAX_LOCK)
            row.locked_until = now + lock
            logger.warning("login locked for %s after %d failures: %d s", key.value,
                           row.failures, lock.total_seconds())
        session.add(row)
    session.commit()


def record_success(session: Session, keys: list[Key]) -> None:
    """The account's count restarts; the address keeps its count (one success from an
    address does not excuse a flood of guesses at other accounts)."""
    session.execute(update(LoginThrottle).where(col(LoginThrottle.key) == keys[0].value)
                    .values(failures=0, locked_until=None, window_start=utcnow()))
    session.commit()


def _locked(row: LoginThrottle, now: datetime) -> bool:
    return row.locked_until is not None and as_utc(row.locked_until) > now


def _row(session: Session, key: str, now: datetime) -> LoginThrottle:
    row = session.get(LoginThrottle, key)
    if row is not None:
        return row
    session.add(LoginThrottle(key=key, failures=0, window_start=now))
    try:
        session.commit()
    except IntegrityError:  # another process made it first
        session.rollback()
    found = session.get(LoginThrottle, key)
    assert found is not None
    return found
