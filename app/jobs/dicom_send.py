"""A study's cases sent to a DICOMweb server as a job: one unit per case, each unit's
instances (app/dicom/build.py) stored with one STOW-RS request (dicomweb-client).

Only what the server's answer names as stored is recorded (DicomSent), so nothing unsent
counts as sent, and a retry of the study sends only what is missing. A server that is down,
refuses the credentials or refuses an instance fails the unit with its message.
"""

import logging

import requests
from dicomweb_client.api import DICOMwebClient
from dicomweb_client.session_utils import create_session_from_user_pass
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from app.db import serialised
from app.dicom.build import Built, instances
from app.dicom.selection import DicomSelection
from app.dicom.uids import Uids
from app.errors import Conflict
from app.jobs.options import JobOptions
from app.jobs.queue import JOB_CREATION_LOCK, add_job
from app.models import DicomSent
from app.settings import Settings
from app.studies.models import StudyItem

logger = logging.getLogger(__name__)
# Cases sent at once: each unit is one HTTP request; a PACS takes a few in parallel.
CONCURRENCY = 2
RETRIES = 2


def start_sending(engine: Engine, study_id: int, settings: Settings,
                  created_by: int | None = None) -> int:
    """The new job's id; Conflict when no server is configured or the study has no cases."""
    if not settings.dicomweb_url:
        raise Conflict("no DICOMweb server is configured (MEDBANANA_DICOMWEB_URL)")
    with Session(engine) as session:
        serialised(session, JOB_CREATION_LOCK)
        tasks = sorted(set(session.scalars(select(col(StudyItem.task_id))
                                           .where(col(StudyItem.study_id) == study_id))))
        if not tasks:
            raise Conflict("the study has no cases to send")
        options = JobOptions(kind="dicom", backend="offline", study_id=study_id,
                             concurrency=CONCURRENCY, dicomweb_url=settings.dicomweb_url)
        job_id = add_job(session, tasks, options, created_by)
        session.commit()
        return job_id


def client_for(settings: Settings, url: str) -> DICOMwebClient:
    password = settings.dicomweb_password.get_secret_value()
    session = (create_session_from_user_pass(settings.dicomweb_username, password)
               if settings.dicomweb_username else None)
    client = DICOMwebClient(url, session=session)
    # The library retries every failed request five times over 30 s, a refused connection
    # included: a server that is down held each case half a minute. Once more, after 1 s.
    client.set_http_retry_params(max_attempts=RETRIES, wait_exponential_multiplier=500)
    return client


def send_case(engine: Engine, options: JobOptions, task_id: int, settings: Settings,
              job_id: int) -> str | None:
    """Send one case's instances not yet acknowledged; None when all are stored, else what
    went wrong, in the server's words where it gave any."""
    url = options.dicomweb_url or ""
    built = Built()
    with Session(engine) as session:
        found = list(instances(session, DicomSelection(study_id=options.study_id, task_ids=(task_id,)),
                               Uids(settings.dicom_uid_root), built))
        sent = set(session.scalars(select(col(DicomSent.sop_instance_uid)).where(
            col(DicomSent.server) == url,
            col(DicomSent.sop_instance_uid).in_([d.SOPInstanceUID for d in found]))))
    todo = [d for d in found if d.SOPInstanceUID not in sent]
    if todo:
        try:
            answer = client_for(settings, url).store_instances(todo)
        except requests.HTTPError as error:
            return _refusal(url, error)
        except requests.RequestException as error:
            return f"{url} cannot be reached: {error.__class__.__name__}: {error}"
        stored = [item.ReferencedSOPInstanceUID for item in answer.get("ReferencedSOPSequence", [])]
        _record(engine, url, stored, job_id)
        failed = answer.get("FailedSOPSequence", [])
        if failed:
            reasons = sorted({str(item.get("FailureReason", "?")) for item in failed})
            return (f"{url} refused {len(failed)} of {len(todo)} instances (failure reason "
                    f"{', '.join(reasons)}); the {len(stored)} it stored are recorded")
        if len(stored) < len(todo):
            return f"{url} acknowledged {len(stored)} of {len(todo)} instances; the rest stay unsent"
    if built.left_out:
        return "; ".join(f"{entry['what']} left out: {entry['why']}" for entry in built.left_out)
    return None


def _refusal(url: str, error: requests.HTTPError) -> str:
    response = error.response
    if response is None:
        return f"{url} refused: {error}"
    body = " ".join(response.text.split())[:300]
    return f"{url} refused: HTTP {response.status_code} {response.reason}" + (f": {body}" if body else "")


def _record(engine: Engine, url: str, stored: list[str], job_id: int) -> None:
    with Session(engine) as session:
        known = set(session.scalars(select(col(DicomSent.sop_instance_uid)).where(
            col(DicomSent.server) == url, col(DicomSent.sop_instance_uid).in_(stored))))
        session.add_all([DicomSent(server=url, sop_instance_uid=uid, job_id=job_id)
                         for uid in dict.fromkeys(stored) if uid not in known])
        try:
            session.commit()
        except IntegrityError:  # another unit recorded the same original meanwhile
            session.rollback()
            for uid in stored:
                with Session(engine) as one:
                    one.add(DicomSent(server=url, sop_instance_uid=uid, job_id=job_id))
                    try:
                        one.commit()
                    except IntegrityError:
                        one.rollback()

