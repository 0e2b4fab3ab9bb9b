"""A pairwise study's pairs exported in the EditReward layout, with every reader's vote and
their agreement, "both unacceptable" kept apart, and loaded back with datasets."""

import json
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from datasets import load_dataset
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.cases.filters import CaseFilter
from app.designs import design_of, write_pairwise, zipped_pairwise
from app.designs.pairwise.answers import PairAnswerIn, submit
from app.designs.pairwise.pairs import PairKind, pairs
from app.models import Attempt, Role
from app.studies.design import StudyError, StudyPlan
from app.studies.models import Assignment, Design, Study
from tests.accounts import add_user
from tests.signing import signing_marker

CALLS = ["a", "b", "equal", "neither"]


def read_study(engine: Engine) -> int:
    """Four accepted-against-rejected pairs, read by two readers: the first reader's calls
    go a, b, equal, neither; the second agrees on the last two and differs on the first two."""
    admin = add_user(engine, "chief", Role.admin)
    readers = [add_user(engine, name, Role.reader) for name in ("dr-a", "dr-b")]
    plan = StudyPlan(name="pairs", case_filter=CaseFilter(modality=("chest_xray",)),
                     reader_ids=[r.id or 0 for r in readers], design=Design.pairwise, total=4)
    with Session(engine) as session:
        study = design_of(Design.pairwise).create(session, replace(plan, pair_kind="accepted"), admin)
        study_id = study.id or 0
        for n, reader in enumerate(readers):
            reads = session.exec(select(Assignment).where(
                Assignment.study_id == study_id, Assignment.user_id == reader.id)
                .order_by(Assignment.item_id)).all()
            for i, assignment in enumerate(reads):
                call = CALLS[i] if n == 0 else ["b", "a", "equal", "neither"][i]
                # the second reader gives reasons and a comment on every pair
                submit(session, study, assignment, PairAnswerIn(
                    call=call, confidence=3 + n, submission_id=f"r{n}-{i}-pairs",
                    tags=["unnatural_edge"] if n else [], comment=f"pair {i}" if n else ""))
    return study_id


def test_the_pairs_load_with_datasets_and_keep_every_vote(demo_engine: Engine, tmp_path: Path) -> None:
    study_id = read_study(demo_engine)
    summary = write_pairwise(demo_engine, study_id, tmp_path / "out", signing_marker())
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    # a vs b and b vs a split the readers (when both sides were drawn the same way they agree).
    assert manifest["counts"]["pairs"] + manifest["counts"]["split"] == 4
    assert manifest["counts"]["both_unacceptable"] == 1 and manifest["counts"]["ties"] == 1
    parquet = load_dataset("parquet", data_files=str(tmp_path / "out" / "pairs.parquet"))["train"]
    jsonl = load_dataset("json", data_files=str(tmp_path / "out" / "pairs.jsonl"))["train"]
    assert parquet.num_rows == jsonl.num_rows == summary.rows == manifest["counts"]["pairs"]
    for row in parquet:
        for path in ("path_src", "path1", "path2"):
            assert (tmp_path / "out" / row[path]).is_file()
        assert row["readers"] == 2 and len(row["votes"]) == 2
        assert row["editor1"] == row["editor2"] == "imported"  # rounds of the data set's own runs
        assert {v["reader"] for v in row["votes"]} == {"dr-a", "dr-b"}
        # the readers' reasons and comments travel with their votes
        said = {v["reader"]: (v["reasons"], v["comment"]) for v in row["votes"]}
        assert said["dr-a"] == ([], "") and said["dr-b"][0] == ["unnatural_edge"]
        assert said["dr-b"][1].startswith("pair ")
        if row["both_unacceptable"]:
            assert not row["tie"] and [v["choice"] for v in row["votes"]] == ["neither", "neither"]
            assert row["agreement"] == 1.0
        elif row["tie"]:
            assert [v["choice"] for v in row["votes"]] == ["equal", "equal"]
        else:  # both readers preferred the same edit: path1
            assert [v["choice"] for v in row["votes"]] == ["path1", "path1"]


def test_the_download_is_the_same_folder_zipped(demo_engine: Engine, tmp_path: Path) -> None:
    study_id = read_study(demo_engine)
    zipped_pairwise(demo_engine, study_id, tmp_path / "pairs.zip", signing_marker())
    archive = zipfile.ZipFile(tmp_path / "pairs.zip")
    names = set(archive.namelist())
    assert {"pairs.jsonl", "pairs.parquet", "manifest.json"} <= names
    rows = [json.loads(line) for line in archive.read("pairs.jsonl").decode().splitlines()]
    assert all(r["path1"] in names and r["path_src"] in names for r in rows)


def test_an_answer_naming_neither_edit_is_refused() -> None:
    with pytest.raises(ValueError, match="call"):
        PairAnswerIn(call="c", confidence=3, submission_id="abcdefgh12")  # type: ignore[arg-type]


def test_no_pairs_of_the_kind_and_a_missing_image_are_refused_with_nothing_made(
        demo_engine: Engine) -> None:
    admin = add_user(demo_engine, "chief", Role.admin)
    reader = add_user(demo_engine, "dr-a", Role.reader)
    plan = StudyPlan(name="pairs", case_filter=CaseFilter(modality=("fundus",)),
                     reader_ids=[reader.id or 0], design=Design.pairwise, total=3)
    with Session(demo_engine) as session:
        with pytest.raises(StudyError, match="no pairs of this kind") as refused:
            design_of(Design.pairwise).create(session, replace(plan, pair_kind="runs"), admin)
        assert refused.value.field == "kind"
        # Every fundus pair's rejected round gone from disk (this test's database points at
        # files that are not there; the shared demo files stay): the draw cannot be shown.
        for pair in pairs(session, PairKind.accepted, plan.case_filter):
            attempt = session.get(Attempt, pair.second.attempt_id)
            assert attempt is not None
            attempt.image_relpath = f"gone/{attempt.id}.png"
            session.add(attempt)
        session.commit()
        with pytest.raises(StudyError, match="missing") as missing:
            design_of(Design.pairwise).create(session, replace(plan, pair_kind="accepted"), admin)
        assert missing.value.field == "kind"
        assert session.exec(select(Study)).all() == []


def test_the_cli_writes_the_pairs_and_names_a_wrong_study(demo_engine: Engine, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from app.cli import cli
    from tests.cli.test_stats import env_for

    read_study(demo_engine)
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    done = runner.invoke(cli, ["export-pairwise", "pairs", str(tmp_path / "out")], env=env)
    assert done.exit_code == 0, done.output
    assert done.output.startswith("wrote ") and (tmp_path / "out" / "pairs.parquet").is_file()
    again = runner.invoke(cli, ["export-pairwise", "pairs", str(tmp_path / "out")], env=env)
    assert again.exit_code == 1 and "already exists" in again.output
    wrong = runner.invoke(cli, ["export-pairwise", "no such study", str(tmp_path / "x")], env=env)
    assert wrong.exit_code == 1 and "no pairwise study" in wrong.output


@pytest.mark.parametrize("left_is_first", [True, False])
def test_a_stored_choice_reads_back_as_the_key_pressed(left_is_first: bool) -> None:
    from app.designs.pairwise.answers import call_of, choice_of

    for call in ("a", "b", "equal", "neither"):
        assert call_of(choice_of(call, left_is_first), left_is_first) == call
    assert choice_of("a", left_is_first) == ("first" if left_is_first else "second")
