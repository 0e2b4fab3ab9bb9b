"""The device cookie a browser gets when it logs in (OWASP, "Slow Down Online Guessing
Attacks with Device Cookies"): signed with the server's key, naming the account and a
random id. A login from a browser that carries one for the account it names is counted under
that device alone (app/accounts/login_throttle.py), so a lock-out of the account by
strangers does not shut out the people who use it."""

import secrets

from fastapi import Request, Response
from itsdangerous import BadSignature, URLSafeSerializer

from app.models import User
from app.settings import Settings

COOKIE = "medbanana_device"
SALT = "medbanana-device-cookie"
# A device is trusted for this long after its last login there.
MAX_AGE = 90 * 24 * 3600


def _serializer(settings: Settings) -> URLSafeSerializer:
    return URLSafeSerializer(settings.resolved_secret_key(), salt=SALT)


def device_of(request: Request, settings: Settings, user: User | None) -> str | None:
    """The device id the request's cookie carries for ``user``; None when there is none,
    it is not ours, or it names another account."""
    raw = request.cookies.get(COOKIE)
    if not raw or user is None:
        return None
    try:
        found = _serializer(settings).loads(raw)
    except BadSignature:
        return None
    if not isinstance(found, dict) or found.get("u") != user.id:
        return None
    device = found.get("d")
    return device if isinstance(device, str) and 16 <= len(device) <= 64 else None


def remember_device(response: Response, settings: Settings, user: User,
                    device: str | None) -> None:
    """Give the browser (again) its device cookie for ``user``: the same id when it had one."""
    value = _serializer(settings).dumps({"u": user.id, "d": device or secrets.token_urlsafe(24)})
    response.set_cookie(COOKIE, value, max_age=MAX_AGE, httponly=True, samesite="lax",
                        secure=settings.resolved_secure_cookies(), path="/")
