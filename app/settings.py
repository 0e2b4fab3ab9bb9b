"""The one settings class. Every value comes from a ``MEDBANANA_`` environment variable; the
Gemini key and base URL also from the variables Google's own tools read."""

import os
import re
import secrets
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Relative to the working directory, as `make demo` and `medbanana serve` are run from the repo.
DEFAULT_VAR_DIR = Path("var")
# A shorter signing key could be guessed offline from a captured cookie.
MIN_SECRET_LENGTH = 32
# A real key has many distinct characters; "aaaa…" or "0123…0123" is a placeholder.
MIN_SECRET_DISTINCT = 12
# Words of the placeholders that README examples and compose files are copied with.
PLACEHOLDER_WORDS = ("change", "placeholder", "example", "replace", "secret", "your", "todo",
                     "default", "insecure", "xxxx", "password")


# An operator's UID root leaves room for the part derived under it (at most 64 characters).
MAX_UID_ROOT = 40
UID_ROOT_FORM = re.compile(r"^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*$")


def uid_root_problem(root: str) -> str | None:
    """Why ``root`` cannot be a DICOM UID root, or None."""
    if not UID_ROOT_FORM.match(root):
        return "is not a UID root: digits in dot-separated parts, none with a leading zero"
    if len(root) > MAX_UID_ROOT:
        return f"has {len(root)} characters; at most {MAX_UID_ROOT} leave room for the UIDs under it"
    return None


class SettingsError(ValueError):
    """A setting that stops start-up; the message says which and what to do."""


def secret_key_problem(key: str) -> str | None:
    """Why a configured secret key must not be used, or None."""
    if len(key) < MIN_SECRET_LENGTH:
        return f"has {len(key)} characters; it needs at least {MIN_SECRET_LENGTH}"
    lowered = key.lower()
    if len(set(key)) < MIN_SECRET_DISTINCT or any(word in lowered for word in PLACEHOLDER_WORDS):
        return "looks like a placeholder"
    return None


class Settings(BaseSettings):
    """Runtime configuration, documented in docs/operator.md's settings table (a test checks that)."""

    model_config = SettingsConfigDict(env_prefix="MEDBANANA_", extra="ignore",
                                      populate_by_name=True)

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
    image_store: str = Field(
        default="",
        description="Where regenerated images are written: a folder, or an fsspec URL such "
                    "as s3://bucket/prefix that workers on several machines share; empty "
                    "means var_dir/pipeline.",
    )
    page_size: int = Field(default=48, ge=1, le=500, description="Cases per page on /cases.")
    demo: bool = Field(
        default=False,
        description="Demo mode (make demo): a generated secret key and cookies over plain HTTP. "
                    "Never for a server with real readers.",
    )
    secret_key: SecretStr = Field(
        default=SecretStr(""),
        description="Signs session cookies; required outside demo mode (python -c 'import "
                    "secrets; print(secrets.token_urlsafe(48))').",
    )
    secret_key_file: Path | None = Field(
        default=None,
        description="A file holding the secret key instead (a container secret).",
    )
    secure_cookies: bool | None = Field(
        default=None,
        description="Send the session cookie over HTTPS only, and HSTS; empty means on outside "
                    "demo mode.",
    )
    root_path: str = Field(
        default="",
        description="The path prefix a reverse proxy serves the app under, e.g. /medbanana.",
    )
    forwarded_allow_ips: str = Field(
        default="",
        description="Proxies whose X-Forwarded-For/-Proto are trusted (comma-separated "
                    "addresses); none by default, so no client can choose the address its "
                    "failed logins count against.",
    )
    log_format: Literal["text", "json"] = Field(
        default="text", description="text, or json for one JSON object per line.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="Lowest level logged.",
    )
    request_threads: int = Field(
        default=4, ge=2, le=256,
        description="Requests one server process works on at once (its route threads). The "
                    "database pool holds as many connections and a few more for background "
                    "work, so a route never waits for one.",
    )
    queue_wait: float = Field(
        default=20.0, gt=0, le=300,
        description="Seconds a request past capacity waits for its turn before a 503 with "
                    "Retry-After.",
    )
    reader_checks: bool = Field(
        default=True,
        description="Test a reader after each known-answer case and pause them if their "
                    "accuracy drops; false only to measure what the checks cost.",
    )
    audit_log: bool = Field(
        default=True,
        description="Append every answer, decision, lock, export and account change to the "
                    "tamper-evident audit log; false only to measure what it costs "
                    "(benchmarks/many_readers.py --log on,off): `medbanana audit verify` then "
                    "names each answer stored without its record.",
    )
    worker: bool = Field(
        default=True,
        description="Run pipeline jobs in the web app's process; false when `medbanana "
                    "pipeline worker` runs them elsewhere.",
    )

    c2pa_cert: Path | None = Field(
        default=None,
        description="PEM file: the certificate that signs the C2PA manifest of every edit the "
                    "app writes out, followed by its issuers; empty means one this server "
                    "makes for itself (named as self-signed) in var_dir/c2pa.",
    )
    c2pa_key: Path | None = Field(
        default=None,
        description="PEM file: the unencrypted private key of MEDBANANA_C2PA_CERT.",
    )

    dicom_uid_root: str = Field(
        default="",
        description="The UID root (your organisation's, registered) under which every exported "
                    "DICOM UID is made; empty means 2.25 UIDs derived from UUIDs, which need "
                    "none.",
    )
    dicomweb_url: str = Field(
        default="",
        description="The DICOMweb server (its STOW-RS, QIDO-RS and WADO-RS base URL) that "
                    "admins may send a study's cases to; empty means no sending.",
    )
    dicomweb_username: str = Field(default="", description="HTTP Basic user for MEDBANANA_DICOMWEB_URL.")
    dicomweb_password: SecretStr = Field(default=SecretStr(""),
                                         description="Its password.")

    gemini_api_key: SecretStr = Field(
        default=SecretStr(""),
        validation_alias=AliasChoices("MEDBANANA_GEMINI_API_KEY", "GOOGLE_API_KEY",
                                      "GEMINI_API_KEY"),
        description="The Gemini API key (also read from GOOGLE_API_KEY or GEMINI_API_KEY); "
                    "empty means only the offline backend.",
    )
    gemini_base_url: str = Field(
        default="",
        validation_alias=AliasChoices("MEDBANANA_GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"),
        description="Where the Gemini API is reached (also GOOGLE_GEMINI_BASE_URL); empty "
                    "means Google's own endpoint.",
    )
    # The Gemini project's quota of each model, as its quota page states it: every job on
    # this server keeps to it (a job may ask for less), scoring and drift checks included.
    gemini_requests_per_minute: int | None = Field(
        default=None, ge=1, description="Each model's requests per minute for every job; "
                                        "empty means none kept unless a job sets its own.")
    gemini_requests_per_day: int | None = Field(
        default=None, ge=1, description="Each model's requests per day for every job.")
    gemini_tokens_per_minute: int | None = Field(
        default=None, ge=1, description="Each model's input tokens per minute for every job.")

    @field_validator("dicom_uid_root")
    @classmethod
    def _uid_root(cls, root: str) -> str:
        root = root.strip().rstrip(".")
        problem = root and uid_root_problem(root)
        if problem:
            raise ValueError(f"MEDBANANA_DICOM_UID_ROOT {root!r} {problem}")
        return root

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.var_dir / 'medbanana.db').resolve()}"

    def resolved_cache_dir(self) -> Path:
        return (self.cache_dir or self.var_dir / "cache").resolve()

    def resolved_secure_cookies(self) -> bool:
        return (not self.demo) if self.secure_cookies is None else self.secure_cookies

    def resolved_secret_key(self) -> str:
        """The configured key; in demo mode only, one made once and kept in var_dir.

        Raises SettingsError when it is missing or a placeholder outside demo mode: a key
        generated on a server would differ between its processes and sign out every reader
        at each restart, and a placeholder can be read in the README by anybody.
        """
        configured = self.secret_key.get_secret_value()
        name = "MEDBANANA_SECRET_KEY"
        if not configured and self.secret_key_file is not None:
            name = f"MEDBANANA_SECRET_KEY_FILE ({self.secret_key_file})"
            try:
                configured = self.secret_key_file.read_text().strip()
            except OSError as error:
                raise SettingsError(f"{name} cannot be read: {error.strerror}") from None
        if configured:
            problem = secret_key_problem(configured)
            if problem:
                raise SettingsError(f"{name} {problem}; make one with: python -c 'import "
                                    "secrets; print(secrets.token_urlsafe(48))'")
            return configured
        if not self.demo:
            raise SettingsError("MEDBANANA_SECRET_KEY is not set. A server needs its own key "
                                "(python -c 'import secrets; print(secrets.token_urlsafe(48))'); "
                                "only demo mode (MEDBANANA_DEMO=true) makes one itself.")
        return self._demo_secret_key()

    def _demo_secret_key(self) -> str:
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
