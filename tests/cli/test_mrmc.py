"""`medbanana mrmc analyse`: the reference data's figures as JSON, and bad files refused in one
line that names the file, the row and the problem, with exit code 2."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "mrmc"
GOOD = ('"modality","reader","case","truth","rating"\n'
        + "".join(f'"{m}","{r}",{c},{int(c > 3)},{(c + r + m) % 5}\n'
                  for m in (0, 1) for r in (0, 1, 2) for c in range(1, 7)))


def test_the_json_holds_the_random_reader_result_under_rrrc() -> None:
    result = CliRunner().invoke(cli, ["mrmc", "analyse", str(REFERENCE / "vandyke.csv"), "--json"])
    assert result.exit_code == 0, result.output
    rrrc = json.loads(result.stdout)["rrrc"]
    assert round(rrrc["f"], 2) == 4.46 and round(rrrc["ddf"], 2) == 15.26 and round(rrrc["p"], 4) == 0.0517
    [difference] = rrrc["differences"]
    assert {"a", "b", "difference", "se", "ci", "p"} <= set(difference)
    assert [round(x, 5) for x in difference["ci"]] == [-0.08796, 0.00036]
    assert [s["modality"] for s in rrrc["single"]] == ["0", "1"]
    assert {"modality", "auc", "se", "ddf", "ci"} <= set(rrrc["single"][0])


def test_the_algorithm_against_the_panel_from_the_shell() -> None:
    result = CliRunner().invoke(cli, ["mrmc", "analyse", str(REFERENCE / "cadlroc-roc.csv"),
                                      "--algorithm", "1", "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["p"] == pytest.approx(0.3210474343, abs=1e-8)


@pytest.mark.parametrize(("text", "words"), [
    (GOOD.replace("truth", "outcome"), "row 1: missing column(s) truth"),
    (GOOD.replace('"1","2",4,1,', '"1","2",4,,'), "row 35: case 4 has no truth"),
    (GOOD.replace('"1","2",4,1,', '"1","2",4,1,high'), "row 35: rating 'high"),
    ("\n".join(line for line in GOOD.splitlines() if not line.startswith('"1","2",')) + "\n",
     "reader 2 has no rating of case 1 in modality 1"),
    # Row 2 says case 1 is diseased; row 8 (reader 1's read of it) says it is not.
    (GOOD.replace('"0","0",1,0,', '"0","0",1,1,'), "row 8: case 1 is given two truths"),
])
def test_a_bad_file_is_one_line_naming_file_row_and_problem(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["mrmc", "analyse", str(path)])
    assert result.exit_code == 2
    message = result.output.strip()
    assert message.startswith(f"error: {path}: ") and words in message, message
    assert "\n" not in message and "Traceback" not in message


def test_a_file_that_is_not_there_is_refused_too(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["mrmc", "analyse", str(tmp_path / "none.csv")])
    assert result.exit_code == 2 and "cannot be read" in result.output


def test_the_imrmc_file_a_real_or_edited_study_downloads_is_read_too(tmp_path: Path) -> None:
    """The same ratings written as the app writes its iMRMC file give the same figures."""
    from app.designs.real_or_edited.ratings import imrmc_lines

    rows = [line.split(",") for line in (REFERENCE / "cadlroc-roc.csv").read_text().splitlines()[1:]]
    truth = {int(c): t == "1" for _, _, c, t, _ in rows}
    ratings = [(f"r{r.strip(chr(34))}", int(c), int(float(v))) for _, r, c, _, v in rows]
    path = tmp_path / "study.imrmc"
    path.write_text("\n".join(imrmc_lines(truth, ratings, description="CAD and radiologists")) + "\n")
    from_imrmc = CliRunner().invoke(cli, ["mrmc", "analyse", str(path), "--algorithm", "r1", "--json"])
    assert from_imrmc.exit_code == 0, from_imrmc.output
    assert json.loads(from_imrmc.stdout)["p"] == pytest.approx(0.3210474343, abs=1e-8)


def test_size_reaches_rjafrocs_cases_and_power() -> None:
    """RJafroc's SsSampleSizeKGivenJ(dataset02, J = 6, OR) gives 251 cases; SsPowerGivenJK
    with J = 10, K = 165 and the effect -0.043800322 gives power 0.80541995."""
    vandyke = str(REFERENCE / "vandyke.csv")
    table = CliRunner().invoke(cli, ["mrmc", "size", vandyke, "--readers", "6", "--json"])
    assert table.exit_code == 0, table.output
    assert json.loads(table.stdout)["rows"][0]["cases"] == 251
    one = CliRunner().invoke(cli, ["mrmc", "size", vandyke, "--readers", "10", "--cases", "165",
                                   "--effect", "-0.043800322", "--json"])
    assert json.loads(one.stdout)["rows"][0]["power"] == pytest.approx(0.80541995, abs=1e-8)
    text = CliRunner().invoke(cli, ["mrmc", "size", vandyke, "--readers", "2", "--power", "0.99"])
    assert "no number of cases reaches it" in text.stdout


@pytest.mark.parametrize(("args", "words"), [
    (["--analysis", "fixed"], "rrrc, frrc or rrfc"),
    (["--cases", "100"], "exactly one --readers"),
])
def test_size_refuses_what_it_cannot_answer(args: list[str], words: str) -> None:
    result = CliRunner().invoke(cli, ["mrmc", "size", str(REFERENCE / "vandyke.csv"), *args])
    assert result.exit_code == 2 and words in result.stderr


def test_size_of_one_modality_names_the_file() -> None:
    result = CliRunner().invoke(cli, ["mrmc", "size", str(REFERENCE / "cadlroc-roc.csv")])
    assert result.exit_code == 2 and "cadlroc-roc.csv" in result.stderr and "two modalities" in result.stderr


def flat_ratings(tmp_path: Path) -> Path:
    """Every reader rates every case alike in both modalities, and perfectly."""
    flat = tmp_path / "flat.csv"
    flat.write_text('"modality","reader","case","truth","rating"\n' + "".join(
        f'"{m}","{r}",{c},{int(c > 3)},{int(c > 3)}\n'
        for m in (0, 1) for r in (0, 1, 2) for c in range(1, 7)))
    return flat


def test_size_of_a_pilot_with_no_variance_is_one_line(tmp_path: Path) -> None:
    """Every reader rates every case alike in both modalities: no variance to predict from."""
    flat = flat_ratings(tmp_path)
    result = CliRunner().invoke(cli, ["mrmc", "size", str(flat), "--readers", "3", "--effect", "0.05"])
    assert result.exit_code == 2 and "flat.csv" in result.stderr and "variance is zero" in result.stderr


def test_analyse_of_a_constant_rating_says_why_in_one_line(tmp_path: Path) -> None:
    flat = flat_ratings(tmp_path)
    result = CliRunner().invoke(cli, ["mrmc", "analyse", str(flat)])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "flat.csv" in result.stderr and "case variance is zero" in result.stderr


def _strict(text: str) -> object:
    """JSON as jq and JavaScript read it: the bare words NaN and Infinity are refused."""
    def refuse(word: str) -> None:
        raise ValueError(f"not JSON: {word}")
    return json.loads(text, parse_constant=refuse)


def test_one_modality_with_readers_alike_is_strict_json_with_no_zero_width_interval(
        tmp_path: Path) -> None:
    """One modality has no between-modality mean square (null, not NaN); three readers with
    the same AUC give Hillis's df unbounded (null: a normal interval) and, cases fixed, no
    variance at all: no interval, rather than one of zero width."""
    truth = [1, 1, 1, 1, 0, 0, 0, 0]
    ratings = {"a": [5, 4, 2, 4, 1, 3, 2, 1], "b": [4, 5, 2, 4, 1, 3, 1, 2],
               "c": [5, 4, 2, 4, 1, 3, 2, 1]}
    path = tmp_path / "alike.csv"
    path.write_text('"modality","reader","case","truth","rating"\n' + "".join(
        f'"m","{r}",{c + 1},{truth[c]},{v}\n' for r, vs in ratings.items() for c, v in enumerate(vs)))
    result = CliRunner().invoke(cli, ["mrmc", "analyse", str(path), "--json"])
    assert result.exit_code == 0, result.output
    found = _strict(result.stdout)
    assert isinstance(found, dict)
    assert found["anova"]["ms_t"] is None and found["anova"]["ms_r"] == 0
    [rrrc] = found["rrrc"]["single"]
    assert rrrc["ddf"] is None and rrrc["ci"][0] < rrrc["auc"] < rrrc["ci"][1]
    [rrfc] = found["rrfc"]["single"]
    assert rrfc["se"] == 0 and rrfc["ci"] == [None, None]
    text = CliRunner().invoke(cli, ["mrmc", "analyse", str(path)]).stdout
    assert "df unbounded: z" in text and "no interval: SE 0, nothing varies" in text


def test_every_json_the_reference_data_gives_is_strict() -> None:
    vandyke = str(REFERENCE / "vandyke.csv")
    for args in (["analyse", vandyke], ["size", vandyke, "--readers", "6"],
                 ["analyse", str(REFERENCE / "cadlroc-roc.csv"), "--algorithm", "1"]):
        result = CliRunner().invoke(cli, ["mrmc", *args, "--json"])
        assert result.exit_code == 0, result.output
        _strict(result.stdout)


def one_reader(tmp_path: Path) -> Path:
    found = tmp_path / "one-reader.csv"
    found.write_text('"modality","reader","case","truth","rating"\n' + "".join(
        f'"{m}","r1",{c},{int(c > 5)},{(c * 7 + m * 3) % 5 + int(c > 5)}\n'
        for m in (0, 1) for c in range(1, 11)))
    return found


def test_one_reader_gives_the_fixed_reader_figures_and_says_why_no_other(tmp_path: Path) -> None:
    """A one-reader file printed a page of NaN and 'SE 0, nothing varies' (the SE is
    undefined, not zero)."""
    shown = CliRunner().invoke(cli, ["mrmc", "analyse", str(one_reader(tmp_path))])
    assert shown.exit_code == 0, shown.output
    assert "Readers random (RRRC, RRFC): not computed: one reader" in shown.stdout
    assert "FRRC: results apply to these readers" in shown.stdout
    assert "nan" not in shown.stdout.lower() and "nothing varies" not in shown.stdout
    as_json = json.loads(CliRunner().invoke(cli, ["mrmc", "analyse", str(one_reader(tmp_path)),
                                                  "--json"]).stdout)
    assert as_json["rrrc"] is None and as_json["rrfc"] is None and as_json["frrc"]["single"]


def test_size_of_a_one_reader_pilot_is_one_line(tmp_path: Path) -> None:
    """It printed '100000 cases (power nan)'."""
    result = CliRunner().invoke(cli, ["mrmc", "size", str(one_reader(tmp_path))])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "one-reader.csv" in result.stderr and "two readers or more" in result.stderr


def test_size_with_no_effect_prints_the_tests_size_not_a_negative_power() -> None:
    result = CliRunner().invoke(cli, ["mrmc", "size", str(REFERENCE / "vandyke.csv"),
                                      "--half-width", "0.05", "--readers", "5"])
    assert result.exit_code == 0, result.output
    assert "power 0.0500" in result.stdout and "-0.95" not in result.stdout
