"""Failed logins locked out with doubling back-off, counted three ways:

- per account *and* address (5 failures): someone mistyping, or a stranger guessing at one
  account from one place. It locks only that pair, so a stranger cannot lock a known user
  out: the user's own logins come from another pair.
- per account (50): guesses at one account from many addresses. Slow on purpose: a stranger
  at one address is stopped by the pair's lock long before this counts up.
- per address (30): guesses spread over many accounts from one address. Its lock holds only
  for names that failed from that address, or that are no account: behind a proxy that sends
  no X-Forwarded-For everyone shares one address, and a user who types the right password
  there is let in.

Kept in the database, so every server process (serve --workers N) counts the same failures.
A locked key is refused before its password is checked: a flood of guesses then costs no
argon2 hashing, and other users' pages stay fast.

A browser that has logged in to the account before carries a device cookie (OWASP's device
cookies against lock-out attacks): its logins are counted under that device alone, never
under the account or an address, so a stranger with 50 addresses who locks the account out
does not lock out the people who use it. A device that fails PAIR_LIMIT times is locked on
its own.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from app.accounts.users import authenticate, find_user
from app.models import LoginThrottle, User, as_utc, utcnow

logger = logging.getLogger(__name__)

# Failures allowed before a lock: a person mistypes a few times; a shared hospital NAT
# address carries many people, so it gets more room than one account.
PAIR_LIMIT = 5
ACCOUNT_LIMIT = 50
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


def log_in(session: Session, name: str, password: str, address: str | None,
           device: str | None = None) -> User:
    """The account, when it is not locked out and the password matches. ``device``: the
    device cookie's id, when this browser has logged in to this account before (the caller
    checked its signature and that it names this account)."""
    if device is not None:
        keys = [Key(f"device:{device[:64]}", PAIR_LIMIT)]
        locked = seconds_locked(session, keys)
    else:
        keys = keys_for(name, address)
        pair, account, *by_address = keys
        locked = seconds_locked(session, [pair, account])
        if by_address and (_failed(session, pair) or find_user(session, name) is None):
            locked = max(locked, seconds_locked(session, by_address))
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
    """The pair's key, the account's, and the address's when it is known."""
    account = name.lower()[:64]
    where = (address or "unknown")[:100]
    keys = [Key(f"pair:{account}@{where}", PAIR_LIMIT), Key(f"user:{account}", ACCOUNT_LIMIT)]
    if address:
        keys.append(Key(f"addr:{where}", ADDRESS_LIMIT))
    return keys


def _failed(session: Session, key: Key) -> bool:
    row = session.get(LoginThrottle, key.value)
    return row is not None and row.failures > 0


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
    """The pair's and the account's counts restart; the address keeps its count (one
    success from an address does not excuse a flood of guesses at other accounts)."""
    session.execute(update(LoginThrottle).where(col(LoginThrottle.key).in_(
        [k.value for k in keys[:2]])).values(failures=0, locked_until=None, window_start=utcnow()))
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
