"""The one settings class. Every value comes from a ``MEDBANANA_`` environment variable."""

import os
import secrets
from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

# Relative to the working directory, as `make demo` and `medbanana serve` are run from the repo.
DEFAULT_VAR_DIR = Path("var")
# A shorter signing key could be guessed offline from a captured cookie.
MIN_SECRET_LENGTH = 32


class Settings(BaseSettings):
    """Runtime configuration, documented in the README's settings table (a test checks that)."""

    model_config = SettingsConfigDict(env_prefix="MEDBANANA_", extra="ignore")

    var_dir: Path = Field(
        default=DEFAULT_VAR_DIR,
        description="Folder for the SQLite database and the image cache.",
    )
    database_url: str = Field(
        default="",
        description="SQLAlchemy URL; empty means a SQLite file var_dir/medbanana.db (WAL mode).",
    )
    cache_dir: Path | None = Field(
        default=None,
        description="Where resized images are cached; empty means var_dir/cache.",
    )
    page_size: int = Field(default=48, ge=1, le=500, description="Cases per page on /cases.")
    secret_key: SecretStr = Field(
        default=SecretStr(""),
        description="Signs session cookies; empty means a random key kept in var_dir/secret.key.",
    )
    secure_cookies: bool = Field(
        default=False,
        description="Send the session cookie over HTTPS only; set it behind a TLS proxy.",
    )
    worker: bool = Field(
        default=True,
        description="Run pipeline jobs in the web app's process; false when `medbanana "
                    "pipeline worker` runs them elsewhere.",
    )

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.var_dir / 'medbanana.db').resolve()}"

    def resolved_cache_dir(self) -> Path:
        return (self.cache_dir or self.var_dir / "cache").resolve()

    def resolved_secret_key(self) -> str:
        """The configured key, or one made once and kept, so sessions survive restarts."""
        configured = self.secret_key.get_secret_value()
        if configured:
            if len(configured) < MIN_SECRET_LENGTH:
                raise ValueError(f"MEDBANANA_SECRET_KEY must have at least {MIN_SECRET_LENGTH} "
                                 "characters")
            return configured
        path = self.var_dir / "secret.key"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass  # another process made it first; read theirs
            else:
                with os.fdopen(descriptor, "w") as out:
                    out.write(secrets.token_urlsafe(48))
        return path.read_text().strip()


@lru_cache
def get_settings() -> Settings:
    return Settings()
