"""Settings for an app under test: a real secret key, as outside demo mode, and cookies over
the test client's plain HTTP (tests of Secure cookies set secure_cookies themselves)."""

import secrets
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from app.settings import Settings

TEST_SECRET_KEY = SecretStr(secrets.token_urlsafe(48))


def server_settings(var_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"var_dir": var_dir, "secret_key": TEST_SECRET_KEY,
                              "secure_cookies": False, **overrides}
    return Settings(**values)
