"""Every setting is documented in docs/operator.md; a server refuses to start without a real key."""

import secrets
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from app.settings import Settings, SettingsError
from app.web.main import create_app

OPERATOR = Path(__file__).resolve().parents[1] / "docs" / "operator.md"


def test_every_setting_is_in_the_operators_page() -> None:
    text = OPERATOR.read_text()
    for name in Settings.model_fields:
        assert f"MEDBANANA_{name.upper()}" in text, f"MEDBANANA_{name.upper()} is not documented"


def test_default_database_is_sqlite_under_var(tmp_path: Path) -> None:
    url = Settings(var_dir=tmp_path).resolved_database_url()
    assert url == f"sqlite:///{tmp_path.resolve()}/medbanana.db"
    assert Settings(database_url="postgresql+psycopg://x/y").resolved_database_url().startswith("postgresql")


def test_outside_demo_mode_a_secret_key_is_required(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="MEDBANANA_SECRET_KEY is not set"):
        Settings(var_dir=tmp_path).resolved_secret_key()
    assert not (tmp_path / "secret.key").exists()
    demo = Settings(var_dir=tmp_path, demo=True)
    assert demo.resolved_secret_key() == demo.resolved_secret_key()  # made once, then kept
    assert (tmp_path / "secret.key").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("key", ["change-me-please-change-me-please-0123456789",
                                 "your-secret-key-here-with-enough-characters",
                                 "a" * 64, "0123456789" * 4, "short-but-random-Xq9"])
def test_placeholder_or_weak_keys_are_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(SettingsError, match="MEDBANANA_SECRET_KEY"):
        Settings(var_dir=tmp_path, secret_key=key).resolved_secret_key()


def test_a_key_file_is_read_and_a_missing_one_named(tmp_path: Path) -> None:
    good = secrets.token_urlsafe(48)
    (tmp_path / "key").write_text(good + "\n")
    assert Settings(var_dir=tmp_path, secret_key_file=tmp_path / "key").resolved_secret_key() == good
    with pytest.raises(SettingsError, match="cannot be read"):
        Settings(var_dir=tmp_path, secret_key_file=tmp_path / "none").resolved_secret_key()


def test_cookies_are_secure_by_default_outside_demo_mode() -> None:
    assert Settings().resolved_secure_cookies() is True
    assert Settings(demo=True).resolved_secure_cookies() is False
    assert Settings(demo=True, secure_cookies=True).resolved_secure_cookies() is True


def test_the_app_refuses_to_start_without_a_key(tmp_path: Path, engine: Engine) -> None:
    with pytest.raises(SettingsError):
        create_app(Settings(var_dir=tmp_path, worker=False), engine)
