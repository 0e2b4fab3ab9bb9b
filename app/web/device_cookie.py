"""The device cookie a browser gets when it logs in (OWASP, "Slow Down Online Guessing
Attacks with Device Cookies"): signed with the server's key, naming each account logged in
to from this browser with a random id. A login from a browser that carries one for the
account is counted under that device alone (app/accounts/login_throttle.py), so a lock-out
of the account by strangers does not shut out the people who use it. One entry per account:
a reading-room workstation is shared, and with one entry only the last account used there
was protected."""

import secrets

from fastapi import Request, Response
from itsdangerous import BadSignature, URLSafeSerializer

from app.models import User
from app.settings import Settings

COOKIE = "medbanana_device"
SALT = "medbanana-device-cookie"
# A device is trusted for this long after its last login there.
MAX_AGE = 90 * 24 * 3600
# Accounts remembered per browser, the most recently used kept: the cookie stays under 2 KB.
MOST_ACCOUNTS = 20


def _serializer(settings: Settings) -> URLSafeSerializer:
    return URLSafeSerializer(settings.resolved_secret_key(), salt=SALT)


def _devices(request: Request, settings: Settings) -> dict[int, str]:
    """Account id -> device id, as the request's cookie carries them (oldest first)."""
    raw = request.cookies.get(COOKIE)
    if not raw:
        return {}
    try:
        found = _serializer(settings).loads(raw)
    except BadSignature:
        return {}
    if isinstance(found, dict) and "u" in found:  # one account, as cookies were made before
        found = {"a": [[found.get("u"), found.get("d")]]}
    entries = found.get("a") if isinstance(found, dict) else None
    if not isinstance(entries, list):
        return {}
    devices: dict[int, str] = {}
    for entry in entries[-MOST_ACCOUNTS:]:
        if (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], int)
                and isinstance(entry[1], str) and 16 <= len(entry[1]) <= 64):
            devices[entry[0]] = entry[1]
    return devices


def device_of(request: Request, settings: Settings, user: User | None) -> str | None:
    """The device id the request's cookie carries for ``user``; None when there is none,
    or the cookie is not ours."""
    if user is None or user.id is None:
        return None
    return _devices(request, settings).get(user.id)


def remember_device(request: Request, response: Response, settings: Settings, user: User,
                    device: str | None) -> None:
    """Give the browser (again) its device cookie with ``user`` in it, the same id when it
    had one, beside the other accounts it has logged in to."""
    devices = _devices(request, settings)
    devices.pop(user.id or 0, None)
    devices[user.id or 0] = device or secrets.token_urlsafe(24)  # the newest last
    entries = [[account, id_] for account, id_ in devices.items()][-MOST_ACCOUNTS:]
    value = _serializer(settings).dumps({"a": entries})
    response.set_cookie(COOKIE, value, max_age=MAX_AGE, httponly=True, samesite="lax",
                        secure=settings.resolved_secure_cookies(), path="/")
