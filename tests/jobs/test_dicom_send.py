"""A study's cases sent to a real DICOMweb server (Orthanc) as a job, read back with QIDO-RS
and WADO-RS; a server down or refusing fails with its message, and a retry sends only what
the server never acknowledged."""

import os
from collections.abc import Iterator

import pytest
from dicomweb_client.api import DICOMwebClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, delete, select

from app.job_models import Job
from app.jobs import claim, run_job, start_sending
from app.models import DicomSent
from app.settings import Settings
from pipeline.offline import OfflineBackend
from tests import aio
from tests.orthanc_server import PASSWORD, USER, OrthancServer
from tests.studies.conftest import make_study


@pytest.fixture(scope="module")
def orthanc() -> Iterator[OrthancServer]:
    try:
        server = OrthancServer()
        server.start()
    except (FileNotFoundError, OSError) as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Orthanc is required in CI: {error}")
        pytest.skip(str(error))
    yield server
    server.stop()


def send(engine: Engine, study_id: int, url: str, monkeypatch: pytest.MonkeyPatch,
         password: str = PASSWORD) -> Job:
    for name, value in (("URL", url), ("USERNAME", USER), ("PASSWORD", password)):
        monkeypatch.setenv(f"MEDBANANA_DICOMWEB_{name}", value)
    job_id = start_sending(engine, study_id, Settings())
    lease = claim(engine, job_id)
    assert lease is not None
    aio.run(run_job(engine, lease, lambda _: OfflineBackend(), "var-unused"))
    with Session(engine) as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def test_a_study_goes_to_orthanc_and_comes_back_synthetic(
        demo_engine: Engine, orthanc: OrthancServer, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = make_study(demo_engine)
    stored: list[int] = []
    real_store = DICOMwebClient.store_instances

    def counted(self: DICOMwebClient, datasets: list, *args: object, **kwargs: object) -> object:  # type: ignore[type-arg]
        stored.append(len(datasets))
        return real_store(self, datasets, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(DICOMwebClient, "store_instances", counted)
    job = send(demo_engine, setup.study.id or 0, orthanc.dicomweb, monkeypatch)
    assert (job.status, job.succeeded, job.api_failed) == ("done", job.total, 0), job.last_errors
    with Session(demo_engine) as session:
        recorded = session.exec(select(DicomSent)).all()
    assert len(recorded) == orthanc.instances() == sum(stored)
    # Read back as any DICOMweb client would: QIDO-RS to find, WADO-RS to fetch.
    client = DICOMwebClient(orthanc.dicomweb, session=_session())
    studies = client.search_for_studies()
    assert studies
    found = [client.retrieve_instance(i["0020000D"]["Value"][0], i["0020000E"]["Value"][0],
                                      i["00080018"]["Value"][0])
             for i in client.search_for_instances(study_instance_uid=studies[0]["0020000D"]["Value"][0])]
    images = [d for d in found if d.SOPClassUID == "1.2.840.10008.5.1.4.1.1.7"]
    assert {d.SyntheticData for d in images} == {"YES", "NO"}
    assert all(d.SyntheticData == ("YES" if d.ImageType[0] == "DERIVED" else "NO") for d in images)
    # A retry sends only what the server never acknowledged: one edit, lost on the server.
    lost = next(r.sop_instance_uid for r in recorded)
    orthanc.delete(lost)
    with Session(demo_engine) as session:
        session.exec(delete(DicomSent).where(col(DicomSent.sop_instance_uid) == lost))  # type: ignore[call-overload]
        session.commit()
    stored.clear()
    again = send(demo_engine, setup.study.id or 0, orthanc.dicomweb, monkeypatch)
    assert again.succeeded == again.total and stored == [1]
    assert orthanc.instances() == len(recorded)


def test_a_server_down_or_refusing_fails_with_its_message_and_records_nothing(
        demo_engine: Engine, orthanc: OrthancServer, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = make_study(demo_engine)
    down = send(demo_engine, setup.study.id or 0, f"http://127.0.0.1:{_closed_port()}/dicom-web", monkeypatch)
    assert down.api_failed == down.total and "cannot be reached" in down.last_errors
    refused = send(demo_engine, setup.study.id or 0, orthanc.dicomweb, monkeypatch,
                   password="wrong")
    assert refused.api_failed == refused.total and "HTTP 401" in refused.last_errors
    with Session(demo_engine) as session:
        assert session.exec(select(DicomSent)).all() == []


def _session() -> object:
    from dicomweb_client.session_utils import create_session_from_user_pass

    return create_session_from_user_pass(USER, PASSWORD)


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
