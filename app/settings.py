"""The one settings class. Every value comes from a ``MEDBANANA_`` environment variable."""

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

# Relative to the working directory, as `make demo` and `medbanana serve` are run from the repo.
DEFAULT_VAR_DIR = Path("var")


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

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.var_dir / 'medbanana.db').resolve()}"

    def resolved_cache_dir(self) -> Path:
        return (self.cache_dir or self.var_dir / "cache").resolve()


@lru_cache
def get_settings() -> Settings:
    return Settings()
