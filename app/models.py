"""The domain model: source images, tasks, runs, attempts and judge verdicts.

A *task* is one source image x disease x direction. A *run* is one execution of the
generate-and-judge pipeline on a task; a task keeps every run. An *attempt* is one round
of a run and a *judge verdict* scores an attempt (an attempt may be judged many times).
"""

import json
import secrets
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import BigInteger, Column, String, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

# The largest id a table's key holds on every engine: PostgreSQL's INTEGER is 32-bit, and a
# larger number sent to it failed in the driver (a 500, and the connection reset).
MAX_DB_ID = 2**31 - 1


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """A datetime read back from the database (naive on SQLite) as aware UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def new_session_nonce() -> str:
    return secrets.token_hex(16)


class Modality(StrEnum):
    chest_xray = "chest_xray"
    brain_mri = "brain_mri"
    fundus = "fundus"
    medical = "medical"


class Direction(StrEnum):
    add = "add"
    remove = "remove"


class RunOrigin(StrEnum):
    imported = "import"
    regeneration = "regeneration"


class DataRoot(SQLModel, table=True):
    """A folder that images may be read from. Image paths are stored relative to one."""

    __tablename__ = "data_root"
    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(sa_column=Column(String(16), nullable=False))  # "run" or "source"
    path: str = Field(sa_column=Column(Text, nullable=False, unique=True))
    # Set when the folder holds the marker file written by `medbanana demo-data`.
    synthetic: bool = False
    created_at: datetime = Field(default_factory=utcnow)


class ImportFile(SQLModel, table=True):
    """One JSON file imported in one transaction; its hash makes re-imports cheap no-ops."""

    __tablename__ = "import_file"
    __table_args__ = (UniqueConstraint("root_id", "relpath", "sha256"),)
    id: int | None = Field(default=None, primary_key=True)
    root_id: int = Field(foreign_key="data_root.id")
    relpath: str = Field(sa_column=Column(Text, nullable=False))
    file_format: str = Field(sa_column=Column(String(16), nullable=False))
    sha256: str = Field(sa_column=Column(String(64), nullable=False))
    size: int
    runs_added: int = 0
    problems: int = 0
    imported_at: datetime = Field(default_factory=utcnow)


class ImportProblem(SQLModel, table=True):
    """A row the importer skipped or imported with a defect, kept so it can be reviewed."""

    __tablename__ = "import_problem"
    id: int | None = Field(default=None, primary_key=True)
    import_file_id: int = Field(foreign_key="import_file.id", index=True)
    task_key: str = Field(sa_column=Column(Text, nullable=False))
    kind: str = Field(sa_column=Column(String(32), nullable=False))
    detail: str = Field(sa_column=Column(Text, nullable=False))


class SourceImage(SQLModel, table=True):
    __tablename__ = "source_image"
    __table_args__ = (UniqueConstraint("dataset", "category", "filename"),)
    id: int | None = Field(default=None, primary_key=True)
    dataset: str = Field(sa_column=Column(String(200), nullable=False))
    modality: str = Field(sa_column=Column(String(16), nullable=False))
    # The folder under {source_root}/{dataset}/: "normal" or the disease name.
    category: str = Field(sa_column=Column(String(200), nullable=False))
    filename: str = Field(sa_column=Column(String(255), nullable=False))
    root_id: int | None = Field(default=None, foreign_key="data_root.id")
    present: bool = False


class Task(SQLModel, table=True):
    """A case in the review app. The columns after ``task_key`` mirror its latest run,
    so that listing and faceting 88K cases is one indexed table scan."""

    __tablename__ = "task"
    # No index on the facet columns in SQLite, on purpose: a page is "the first 48 matches by
    # id", which a primary-key scan answers at once, while an index on a facet column makes
    # SQLite collect and sort every match first (measured 4x slower on 88K cases).
    # PostgreSQL, which has the columns' statistics, gets (disease, id) and (modality, id)
    # (migration 0028), made by hand like the sort indexes.
    __table_args__ = (UniqueConstraint("source_image_id", "disease", "direction"),)
    id: int | None = Field(default=None, primary_key=True)
    source_image_id: int = Field(foreign_key="source_image.id")
    dataset: str = Field(sa_column=Column(String(200), nullable=False))
    modality: str = Field(sa_column=Column(String(16), nullable=False))
    disease: str = Field(sa_column=Column(String(200), nullable=False))
    direction: str = Field(sa_column=Column(String(8), nullable=False))
    task_key: str = Field(sa_column=Column(String(512), nullable=False))
    # Indexed: the judged-edit pool joins every attempt to its task's latest run, and without
    # the index SQLite built an automatic one on every such query (issue 28).
    latest_run_id: int | None = Field(default=None, index=True)
    outcome: str | None = Field(default=None, sa_column=Column(String(16)))
    n_rounds: int = 0
    failed_mask: int = 0
    accepted_attempt_id: int | None = None
    thumb_attempt_id: int | None = None
    # The final edit's (thumb_attempt_id's) preservation metrics, copied here once measured
    # (app/images/metrics_store.py) so /cases sorts and bounds them from indexes on this table.
    final_changed: float | None = None
    final_ssim_outside: float | None = None
    final_regions: int | None = None
    final_psnr: float | None = None


class Run(SQLModel, table=True):
    __tablename__ = "run"
    __table_args__ = (UniqueConstraint("task_id", "fingerprint"),)
    id: int | None = Field(default=None, primary_key=True)
    task_id: int = Field(foreign_key="task.id", index=True)
    origin: str = Field(sa_column=Column(String(16), nullable=False))
    # Indexed for the data version (app/cases/facets.py), which counts runs still running.
    outcome: str = Field(sa_column=Column(String(16), nullable=False, index=True))
    n_rounds: int = 0
    success_round: int | None = None
    final_instruction: str | None = Field(default=None, sa_column=Column(Text))
    failure_step: str | None = Field(default=None, sa_column=Column(String(32)))
    failure_round: int | None = None
    failure_error: str | None = Field(default=None, sa_column=Column(Text))
    # Hash of the source record, so importing the same record twice adds nothing.
    fingerprint: str = Field(sa_column=Column(String(64), nullable=False))
    import_file_id: int | None = Field(default=None, foreign_key="import_file.id")
    created_at: datetime = Field(default_factory=utcnow)


class Attempt(SQLModel, table=True):
    __tablename__ = "attempt"
    __table_args__ = (UniqueConstraint("run_id", "round"),)
    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id")
    round: int
    instruction: str | None = Field(default=None, sa_column=Column(Text))
    instruction_thinking: str | None = Field(default=None, sa_column=Column(Text))
    image_root_id: int | None = Field(default=None, foreign_key="data_root.id")
    image_relpath: str | None = Field(default=None, sa_column=Column(Text))
    image_present: bool = False
    edit_error: str | None = Field(default=None, sa_column=Column(Text))
    # For pipeline rounds: backend, models, prompt versions, tokens and latency per call (JSON).
    calls: str | None = Field(default=None, sa_column=Column(Text))


# Verdict fields that raw_json leaves out because their own columns hold them verbatim.
TEXT_STORED_APART = {"reason": "reason", "thinking_summary": "thinking_summary"}


# The prompt version of verdicts that came from a run's files rather than from this app's
# judge prompts.
IMPORTED_PROMPT_VERSION = "imported"


class JudgeVerdict(SQLModel, table=True):
    __tablename__ = "judge_verdict"
    id: int | None = Field(default=None, primary_key=True)
    attempt_id: int = Field(foreign_key="attempt.id", index=True)
    # Instruction compliance, derived per direction: for a removal it is `not has_disease`.
    compliance: bool | None = None
    structure: bool | None = None
    realism: bool | None = None
    # The scripts never wrote fidelity; it stays NULL for imported verdicts.
    fidelity: bool | None = None
    qualified: bool | None = None
    has_disease: bool | None = None
    weighted_score: float | None = None
    reason: str | None = Field(default=None, sa_column=Column(Text))
    thinking_summary: str | None = Field(default=None, sa_column=Column(Text))
    # The judge's answer could not be read (e.g. "JSON parse error: ...").
    error: str | None = Field(default=None, sa_column=Column(Text))
    model: str | None = Field(default=None, sa_column=Column(String(100)))
    prompt_version: str | None = Field(default=None, sa_column=Column(String(100)))
    raw_json: str | None = Field(default=None, sa_column=Column(Text))
    created_at: datetime = Field(default_factory=utcnow)
    # The candidate judge that gave it (app/judges), promoted when its job was made; None
    # for the judge of record's own prompt and for every imported verdict. No foreign key
    # here: the candidates' table belongs to app/judges, which reads this one.
    candidate_id: int | None = None

    def raw(self) -> dict[str, Any] | None:
        """The judge's JSON object as received: raw_json plus the texts stored apart."""
        if self.raw_json is None:
            return None
        value: dict[str, Any] = json.loads(self.raw_json)
        for key, column in TEXT_STORED_APART.items():
            text = getattr(self, column)
            if text is not None:
                value[key] = text
        return value


class Role(StrEnum):
    admin = "admin"
    reader = "reader"


class User(SQLModel, table=True):
    __tablename__ = "app_user"  # "user" is reserved in PostgreSQL
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    role: str = Field(sa_column=Column(String(16), nullable=False))
    password_hash: str = Field(sa_column=Column(Text, nullable=False))
    # Accounts made by `make demo`, whose passwords were printed on a terminal.
    is_demo: bool = False
    # What a study report says of its readers (GRRAS item 4), entered by an admin.
    qualification: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    experience_years: int | None = None
    board_certified: bool | None = None  # None: not recorded
    created_at: datetime = Field(default_factory=utcnow)
    # Deactivated, never deleted (a trigger refuses DELETE): answers keep their reader, and
    # an id is never handed to somebody else.
    active: bool = True
    deactivated_at: datetime | None = None
    # Every session cookie carries it; logout, a password change or deactivation replaces
    # it, which ends every session of the account, copied cookies included.
    session_nonce: str = Field(default_factory=new_session_nonce,
                               sa_column=Column(String(32), nullable=False))


class AuditEvent(SQLModel, table=True):
    """One administrative action on an account (created, password reset, deactivated, ...).
    Appended, never changed: the accounts page shows them, newest first."""

    __tablename__ = "audit_event"
    id: int | None = Field(default=None, primary_key=True)
    at: datetime = Field(default_factory=utcnow, index=True)
    actor_id: int | None = Field(default=None, foreign_key="app_user.id")  # None: the shell
    action: str = Field(sa_column=Column(String(40), nullable=False))
    subject_id: int | None = Field(default=None, foreign_key="app_user.id", index=True)
    detail: str = Field(default="", sa_column=Column(Text, nullable=False))


class AuditRecord(SQLModel, table=True):
    """One record of the tamper-evident audit log (app/audit): what was done, by whom, with
    the SHA-256 of the record before it in ``prev`` and its own in ``digest``. Appended in
    the transaction of the change it records; never updated."""

    __tablename__ = "audit_record"
    # Unique: two records can never follow one head, so the log cannot fork.
    __table_args__ = (UniqueConstraint("prev"),)
    id: int | None = Field(default=None, primary_key=True)
    at: datetime = Field(default_factory=utcnow)
    actor: str = Field(sa_column=Column(String(200), nullable=False))
    action: str = Field(sa_column=Column(String(40), nullable=False))
    subject: str = Field(default="", sa_column=Column(Text, nullable=False))
    # Canonical JSON (sorted keys): what the record says; a row's digest where it records one.
    body: str = Field(default="{}", sa_column=Column(Text, nullable=False))
    prev: str = Field(sa_column=Column(String(64), nullable=False))
    digest: str = Field(sa_column=Column(String(64), nullable=False, unique=True))


class DicomSent(SQLModel, table=True):
    """An instance a DICOMweb server acknowledged storing (STOW-RS): what a retry skips.
    Only what the server's answer names is recorded, so nothing unsent counts as sent."""

    __tablename__ = "dicom_sent"
    __table_args__ = (UniqueConstraint("server", "sop_instance_uid"),)
    id: int | None = Field(default=None, primary_key=True)
    server: str = Field(sa_column=Column(String(500), nullable=False))
    sop_instance_uid: str = Field(sa_column=Column(String(64), nullable=False))
    job_id: int | None = None
    sent_at: datetime = Field(default_factory=utcnow)


class ApiToken(SQLModel, table=True):
    """A bearer token for scripts. Only its SHA-256 is stored; the token is shown once.
    Revoked, never deleted, so the list of tokens an account ever had stays complete."""

    __tablename__ = "api_token"
    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="app_user.id", index=True)
    token_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    name: str = Field(default="", sa_column=Column(String(64), nullable=False))
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime | None = None
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


class LoginThrottle(SQLModel, table=True):
    """Failed logins of one account ("user:NAME") or one address ("addr:IP"), shared by every
    server process, and how long that key is locked out."""

    __tablename__ = "login_throttle"
    key: str = Field(sa_column=Column(String(200), primary_key=True))
    failures: int = 0
    window_start: datetime = Field(default_factory=utcnow)
    locked_until: datetime | None = None


class DataChange(SQLModel, table=True):
    """How many times a table changed, counted by its triggers (migration 0040): a kept figure
    resting on a table whose rows arrive in the background (the metrics) looks up one row
    instead of counting them all."""

    __tablename__ = "data_change"
    name: str = Field(sa_column=Column(String(32), primary_key=True))
    changes: int = Field(sa_column=Column(BigInteger, nullable=False))


class AttemptMetric(SQLModel, table=True):
    """Preservation metrics of an attempt's edit against its original (app/images/metrics.py)."""

    __tablename__ = "attempt_metric"
    attempt_id: int = Field(foreign_key="attempt.id", primary_key=True)
    psnr: float | None = None
    ssim: float | None = None
    ssim_outside: float | None = None
    changed_fraction: float | None = None
    changed_regions: int | None = None
    side: int = 0
    # The edit's decoded pixels (app/images/metrics.py pixel_digest): two edits of one task
    # with one digest are the same image, and a pairwise pool leaves that pair out.
    pixels_sha256: str | None = Field(default=None, sa_column=Column(String(64)))
    # Why there are no figures (an image missing or unreadable); set instead of them.
    error: str | None = Field(default=None, sa_column=Column(Text))
    computed_at: datetime = Field(default_factory=utcnow)
