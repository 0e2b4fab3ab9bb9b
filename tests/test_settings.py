"""Every setting is documented in the README, by its environment variable."""

from pathlib import Path

from app.settings import Settings

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_setting_is_in_the_readme() -> None:
    text = README.read_text()
    for name in Settings.model_fields:
        assert f"MEDBANANA_{name.upper()}" in text, f"MEDBANANA_{name.upper()} is not documented"


def test_default_database_is_sqlite_under_var(tmp_path: Path) -> None:
    url = Settings(var_dir=tmp_path).resolved_database_url()
    assert url == f"sqlite:///{tmp_path.resolve()}/medbanana.db"
    assert Settings(database_url="postgresql+psycopg://x/y").resolved_database_url().startswith("postgresql")
