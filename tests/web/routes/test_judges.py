"""/judges: candidates made in the browser (the form kept on a refusal, the diff and the
version shown), scoring started as a job, and the leaderboard of a locked study."""

from pathlib import Path

from bs4 import BeautifulSoup
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.background import wait_for_background
from app.job_models import Job
from app.jobs import claim, make_backend, run_job
from app.models import Role
from app.settings import Settings
from app.studies.models import Study, StudyStatus
from pipeline.judge_spec import default_template
from pipeline.loop import RetryPolicy
from tests import aio
from tests.reference_study import Reference
from tests.web.routes.test_accounts import client_for


def soup(text: str) -> BeautifulSoup:
    return BeautifulSoup(text, "html.parser")


def test_a_refused_candidate_keeps_what_was_typed(demo_engine: Engine, settings: Settings) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    page = soup(admin.get("/judges").text)
    assert page.select_one("#no-candidates") is not None
    assert page.select_one("textarea[name=template]").text.strip() == default_template().strip()
    assert page.select_one("#template-same") is not None
    typed = "Judge {{ instruction }} {% if %}"
    refused = admin.post("/judges", data={"name": "broken one", "backend": "offline",
                                          "model": "offline-heuristic-1", "template": typed,
                                          "repeats": "2"})
    assert refused.status_code == 422
    page = soup(refused.text)
    assert "does not render" in page.select_one("#error-template").text
    assert page.select_one("input[name=name]")["value"] == "broken one"
    assert page.select_one("textarea[name=template]").text == typed
    assert page.select_one("input[name=repeats]")["value"] == "2"
    assert admin.post("/judges", data={"name": "x", "backend": "offline", "model": "m",
                                       "template": default_template(), "temperature": "hot"}
                      ).status_code == 422


def test_a_candidate_shows_its_diff_and_version(demo_engine: Engine, settings: Settings) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    made = admin.post("/judges", data={"name": "brief", "backend": "offline",
                                       "model": "offline-heuristic-1",
                                       "template": default_template() + "\nBe brief.",
                                       "bias": "strict"}, follow_redirects=False)
    assert made.status_code == 303
    page = soup(admin.get(made.headers["location"]).text)
    assert len(page.select_one("#candidate-version").text) == 12
    added = [s.text for s in page.select("#template-diff .diff-added")]
    assert added[-1] == "+Be brief." and all(a.startswith("+") for a in added)
    assert soup(admin.get("/judges").text).select_one('#candidates a').text == "brief"


def test_score_as_a_job_then_read_the_leaderboard(demo_engine: Engine, settings: Settings,
                                                  reference: Reference, tmp_path: Path) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    made = admin.post("/judges", data={"name": "lenient", "backend": "offline",
                                       "model": "offline-heuristic-1", "template": default_template(),
                                       "bias": "lenient"}, follow_redirects=False)
    page = soup(admin.get(made.headers["location"]).text)
    row = page.select_one(f'#outlooks tr[data-study-id="{reference.study_id}"]')
    # 16 edits of 15 tasks, each asked again with the original first: 32 answers, and an
    # offline candidate calls nothing (no Gemini time, no Batch API line)
    assert row is not None and "Estimate for 15 tasks: about 32 calls" in row.text
    assert "no Gemini call" in row.text and "Batch API:" not in row.text
    started = admin.post(made.headers["location"] + "/score", data={"study": reference.study_id},
                         follow_redirects=False)
    assert started.status_code == 303 and "/jobs/" in started.headers["location"]
    lease = claim(demo_engine)
    assert lease is not None
    aio.run(run_job(demo_engine, lease, lambda o: make_backend(o, settings), tmp_path,
                    policy=RetryPolicy(attempts=1, base_seconds=0.0)))
    job = soup(admin.get(started.headers["location"]).text)
    assert "score a candidate judge" in job.select_one("h1").text
    board = admin.get(f"/judges/leaderboard?study={reference.study_id}")
    assert board.status_code == 200
    table = soup(board.text).select_one("#leaderboard")
    assert {tr["data-judge"] for tr in table.select("tbody tr")} == {"judge of record", "lenient"}
    assert table.select_one('tr[data-judge="lenient"] td.order') is not None
    letters = {tr["data-judge"]: tr.select_one(".letters").text for tr in table.select("tbody tr")}
    assert all(letters.values())
    assert soup(board.text).select_one("#ranks .ranks-line").text
    # The forest plot beside the table: one labelled row per judge with its n, and three
    # panels.
    forest = soup(board.text).select_one("#leaderboard-forest svg")
    assert forest is not None
    drawn = [t.get_text() for t in forest.select("text")]
    for tr in table.select("tbody tr"):
        n = tr.select_one("td.num").get_text().split()[0]
        assert f"{tr['data-judge']} · n={n}" in drawn
    assert {"Agreement", "Too strict", "Too lenient"} <= set(drawn)
    matrix = soup(board.text).select_one('.flip-matrix[data-judge="lenient"]')
    assert matrix is not None and matrix.select_one("td.to-pass-agree") is not None
    assert soup(board.text).select_one('.flip-matrix[data-judge="judge of record"]') is None
    # Two readers: the skill-weighted model cannot tell them apart, so no order under it.
    assert soup(board.text).select_one("#weighted-table") is None
    assert "three readers" in soup(board.text).select_one("#weighted-none").text
    # The alternative annotator test for every judge: 16 edits, under its 30 per reader.
    stand_in = soup(board.text).select_one("#stand-in-table")
    assert [tr["data-judge"] for tr in stand_in.select("tbody tr")] == ["judge of record", "lenient"]
    # Said as untested: a bare "too few readers" under "Can stand in for a reader?" read as a yes.
    assert {td["data-conclusion"] for td in stand_in.select("td[data-conclusion]")} == {
        "not tested: too few readers"}
    assert len(stand_in.select("td.kappa-z")) == 2  # two readers: no spread of theirs, said why
    refused = admin.get(f"/judges/leaderboard?study={reference.study_id}&epsilon=2")
    assert refused.status_code == 422
    kept = soup(refused.text)
    assert "epsilon" in kept.select_one("#stand-in-error").text
    assert kept.select_one("#stand-in-epsilon")["value"] == "2"
    realism = soup(admin.get(f"/judges/leaderboard?study={reference.study_id}&question=realism").text)
    assert realism.select_one("#leaderboard")["data-question"] == "realism"
    assert admin.get(f"/judges/leaderboard?study={reference.study_id}&question=nope").status_code == 422


def test_an_open_study_and_a_keyless_gemini_candidate_are_refused(
        demo_engine: Engine, settings: Settings, reference: Reference) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    with Session(demo_engine) as session:
        study = session.get(Study, reference.study_id)
        assert study is not None
        study.status = StudyStatus.open.value
        session.add(study)
        session.commit()
        refused = admin.get(f"/judges/leaderboard?study={reference.study_id}")
        assert refused.status_code == 409 and "not locked" in refused.text
        study.status = StudyStatus.locked.value
        session.add(study)
        session.commit()
    made = admin.post("/judges", data={"name": "pro", "backend": "gemini", "model": "gemini-2.5-pro",
                                       "template": default_template()}, follow_redirects=False)
    keyless = admin.post(made.headers["location"] + "/score", data={"study": reference.study_id})
    assert keyless.status_code == 409 and "no key" in keyless.text
    with Session(demo_engine) as session:
        assert session.scalar(select(func.count()).select_from(Job)) == 0
    assert admin.post(made.headers["location"] + "/score", data={"study": "x"}).status_code == 422
    reader = client_for(demo_engine, settings, "someone", Role.reader)
    assert reader.get("/judges").status_code == 403


def test_promote_and_return_to_the_record(demo_engine: Engine, settings: Settings) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    made = admin.post("/judges", data={"name": "lenient", "backend": "offline",
                                       "model": "offline-heuristic-1", "template": default_template(),
                                       "bias": "lenient"}, follow_redirects=False)
    page = soup(admin.get(made.headers["location"]).text)
    assert page.select_one("#promote") is not None
    done = admin.post(made.headers["location"] + "/promote", follow_redirects=False)
    assert done.status_code == 303
    assert soup(admin.get(made.headers["location"]).text).select_one("#is-promoted") is not None
    index = soup(admin.get("/judges").text)
    assert index.select_one("#promoted a").text == "lenient"
    assert index.select_one("#candidates .badge.pass").text == "judges new jobs"
    assert admin.post("/judges/default", follow_redirects=False).status_code == 303
    assert "own prompt" in soup(admin.get("/judges").text).select_one("#promoted").text
    assert admin.post("/judges/999/promote").status_code == 404


def test_the_leaderboard_offers_the_disagreements(demo_engine: Engine, settings: Settings) -> None:
    from tests.judges.test_targets import _study_whose_readers_reject_some_accepted_edits

    study_id = _study_whose_readers_reject_some_accepted_edits(demo_engine)
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    page = soup(admin.get(f"/judges/leaderboard?study={study_id}").text)
    listed = page.select("#let-through li a")
    assert listed and all(a["href"].startswith("/cases/") for a in listed)
    assert page.select_one("#regenerate-let-through button") is not None
    assert page.select_one("#thrown-away") is None
    started = admin.post("/judges/leaderboard/regenerate", data={"study": study_id},
                         follow_redirects=False)
    assert started.status_code == 303 and "/jobs/" in started.headers["location"]
    job = soup(admin.get(started.headers["location"]).text)
    assert job.select_one("#job-judge").text == "the judge of record's own prompt"
    assert admin.post("/judges/leaderboard/regenerate", data={"study": "x"}).status_code == 422


def test_a_follow_up_from_the_job_page(demo_engine: Engine, settings: Settings, tmp_path: Path) -> None:
    from tests.judges.test_targets import _study_whose_readers_reject_some_accepted_edits

    source = _study_whose_readers_reject_some_accepted_edits(demo_engine)
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    started = admin.post("/judges/leaderboard/regenerate", data={"study": source},
                         follow_redirects=False)
    job_url = started.headers["location"]
    assert soup(admin.get(job_url).text).select_one("#follow-up-form") is None  # not done yet
    lease = claim(demo_engine)
    assert lease is not None
    aio.run(run_job(demo_engine, lease, lambda o: make_backend(o, settings), tmp_path,
                    policy=RetryPolicy(attempts=1, base_seconds=0.0)))
    form = soup(admin.get(job_url).text).select_one("#follow-up-form")
    assert form is not None
    made = admin.post("/judges/follow-up", data={"job": job_url.rsplit("/", 1)[1],
                                                 "name": "after the strict judge"},
                      follow_redirects=False)
    wait_for_background()  # its images are drawn in a thread of its own
    assert made.status_code == 303 and "/studies/" in made.headers["location"]
    agreement = soup(admin.get(made.headers["location"] + "/agreement").text)
    assert agreement.select_one("#before-after-waiting") is not None
    assert agreement.select_one(f'#before-after a[href$="/studies/{source}/agreement"]') is not None
    assert admin.post("/judges/follow-up", data={"job": "x"}).status_code == 422


def test_a_panel_from_the_page_keeps_its_choices_when_refused(demo_engine: Engine,
                                                             settings: Settings) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    ids = []
    for name in ("a", "b"):
        made = admin.post("/judges", data={"name": name, "backend": "offline", "model": "m-1",
                                           "template": default_template()}, follow_redirects=False)
        ids.append(made.headers["location"].rsplit("/", 1)[1])
    refused = admin.post("/judges/panels", data={"panel_name": "pair", "rule": "majority",
                                                 "members": ids[:1]})
    assert refused.status_code == 422
    page = soup(refused.text)
    assert "at least two" in page.select_one("#error-members").text
    assert page.select_one("input[name=panel_name]")["value"] == "pair"
    assert [i["value"] for i in page.select("input[name=members][checked]")] == ids[:1]
    made = admin.post("/judges/panels", data={"panel_name": "pair", "rule": "stacked",
                                              "members": ids}, follow_redirects=False)
    assert made.status_code == 303
    listed = soup(admin.get("/judges").text).select('#candidates tbody tr')[-1].text
    assert "panel (stacked) of 2 candidates" in listed
    detail = soup(admin.get(made.headers["location"]).text)
    assert [a.text for a in detail.select("#panel-members a")] == ["a", "b"]
    assert detail.select_one("#promote") is None and detail.select_one("#outlooks") is None


def test_ids_posted_out_of_range_are_refused_not_errors(demo_engine: Engine,
                                                         settings: Settings) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    made = admin.post("/judges", data={"name": "a", "backend": "offline", "model": "m-1",
                                       "template": default_template()}, follow_redirects=False)
    huge = str(10**30)
    for url, data in ((made.headers["location"] + "/score", {"study": huge}),
                      ("/judges/leaderboard/regenerate", {"study": huge}),
                      ("/judges/leaderboard/drift", {"study": "0"}),
                      ("/judges/follow-up", {"job": huge})):
        assert admin.post(url, data=data).status_code == 422, url
    refused = admin.post("/judges/panels", data={"panel_name": "p", "rule": "majority",
                                                 "members": [huge, "1"]})
    assert refused.status_code == 422
    assert admin.get(f"/judges/leaderboard?study={huge}").status_code == 422


def test_a_sentinel_set_from_the_page(demo_engine: Engine, settings: Settings,
                                      reference: Reference, tmp_path: Path) -> None:
    from tests.reference_study import second_study

    other = second_study(demo_engine, reference)
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    refused = admin.post("/judges/sentinels", data={"sentinel_name": "watch", "per_study": "4",
                                                    "seed": "9", "studies": [str(other)]})
    assert refused.status_code == 422
    page = soup(refused.text)
    assert "at least two" in page.select_one("#error-studies").text
    assert page.select_one("input[name=sentinel_name]")["value"] == "watch"
    assert page.select_one("input[name=per_study]")["value"] == "4"
    assert [i["value"] for i in page.select("input[name=studies][checked]")] == [str(other)]
    for bad in ({"per_study": "many"}, {"seed": "-1"}, {"studies": ["x", str(other)]}):
        posted = {"sentinel_name": "watch", "studies": [str(reference.study_id), str(other)]} | bad
        assert admin.post("/judges/sentinels", data=posted).status_code == 422
    made = admin.post("/judges/sentinels", data={
        "sentinel_name": "watch", "per_study": "4", "seed": "9",
        "studies": [str(reference.study_id), str(other)]}, follow_redirects=False)
    assert made.status_code == 303 and "sentinel=" in made.headers["location"]
    sentinel_id = made.headers["location"].rsplit("=", 1)[1]
    index = soup(admin.get("/judges").text)
    listed = index.select_one(f'#sentinel-sets li[data-sentinel-id="{sentinel_id}"]')
    assert listed is not None and "8 edits from 2 studies" in listed.text
    board = soup(admin.get(made.headers["location"]).text)
    assert "8 settled edits drawn from 2 locked studies" in board.select_one("main p.muted").text
    assert board.select_one("#targets") is None  # regeneration is offered per study
    assert board.select_one('#drift-form input[name=sentinel]')["value"] == sentinel_id
    # A candidate scored on it from its page, as a job.
    created = admin.post("/judges", data={"name": "strict", "backend": "offline",
                                          "model": "offline-heuristic-1",
                                          "template": default_template(), "bias": "strict"},
                         follow_redirects=False)
    detail = soup(admin.get(created.headers["location"]).text)
    row = detail.select_one(f'#outlooks tr[data-sentinel-id="{sentinel_id}"]')
    assert row is not None and row.select_one("button.score-batch") is None  # offline
    started = admin.post(created.headers["location"] + "/score", data={"sentinel": sentinel_id},
                         follow_redirects=False)
    assert started.status_code == 303
    job = soup(admin.get(started.headers["location"]).text)
    assert job.select_one("#scored-candidate").text == "strict"
    assert job.select_one("#scored-leaderboard")["href"] == f"/judges/leaderboard?sentinel={sentinel_id}"
    lease = claim(demo_engine)
    assert lease is not None
    aio.run(run_job(demo_engine, lease, lambda o: make_backend(o, settings), tmp_path,
                    policy=RetryPolicy(attempts=1, base_seconds=0.0)))
    table = soup(admin.get(made.headers["location"]).text).select_one("#leaderboard")
    assert {tr["data-judge"] for tr in table.select("tbody tr")} == {"judge of record", "strict"}
    assert table.select_one('tr[data-judge="strict"] td.num').text.startswith("8 ")
    batch = admin.post(created.headers["location"] + "/score",
                       data={"study": reference.study_id, "mode": "batch"})
    assert batch.status_code == 409 and "Batch API" in batch.text
    assert admin.get("/judges/leaderboard").status_code == 422
    assert admin.get(f"/judges/leaderboard?study={other}&sentinel={sentinel_id}").status_code == 422
    assert admin.get("/judges/leaderboard?sentinel=999").status_code == 404


def test_drift_on_a_schedule_from_the_leaderboard(demo_engine: Engine, settings: Settings,
                                                  reference: Reference) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    url = f"/judges/leaderboard?study={reference.study_id}"
    assert soup(admin.get(url).text).select_one("#schedule-state") is None
    set_ = admin.post("/judges/leaderboard/schedule",
                      data={"study": reference.study_id, "every_hours": "72"},
                      follow_redirects=False)
    assert set_.status_code == 303 and set_.headers["location"].endswith("#drift")
    state = soup(admin.get(url).text).select_one("#schedule-state")
    assert state is not None and "every 72 hours" in state.text
    listed = soup(admin.get("/judges").text).select_one("#drift-watches li")
    assert listed.select_one("a").text == "pilot" and "every 72 hours" in listed.text
    for bad in ("0", "x", "99999999"):
        refused = admin.post("/judges/leaderboard/schedule",
                             data={"study": reference.study_id, "every_hours": bad})
        assert refused.status_code == 422
    stopped = admin.post("/judges/leaderboard/schedule",
                         data={"study": reference.study_id, "stop": "1"}, follow_redirects=False)
    assert stopped.status_code == 303
    assert soup(admin.get(url).text).select_one("#schedule-state") is None
    reader = client_for(demo_engine, settings, "someone", Role.reader)
    assert reader.post("/judges/leaderboard/schedule",
                       data={"study": reference.study_id, "every_hours": "1"}).status_code == 403
