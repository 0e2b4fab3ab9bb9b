"""The skill-weighted reference: our Dawid-Skene EM, held to the step-by-step example
crowd-kit's authors publish and to crowd-kit itself, run to convergence where crowd-kit's
own stopping rule stops early, a reader who errs counting for less, and no figure from two
readers."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine

from app.agreement.dawid_skene import fit_votes
from app.studies.models import Design

# The five-task, five-worker example of crowd-kit's published Dawid-Skene tests
# (Toloka/crowd-kit, tests/aggregation/test_ds_aggregation.py, "test_dawid_skene_step_by_step"):
# yes is pass, no is fail; w3 did not answer t1.
EXAMPLE = {
    "t1": {"w1": False, "w2": True, "w4": True, "w5": False},
    "t2": {"w1": True, "w2": True, "w3": True, "w4": False, "w5": False},
    "t3": {"w1": True, "w2": False, "w3": False, "w4": True, "w5": False},
    "t4": {"w1": True, "w2": True, "w3": True, "w4": True, "w5": True},
    "t5": {"w1": True, "w2": False, "w3": False, "w4": False, "w5": False},
}


def _votes() -> list[tuple[object, str, bool]]:
    return [(task, worker, passed) for task, given in EXAMPLE.items() for worker, passed in given.items()]


def test_one_em_step_gives_the_published_posteriors_priors_and_errors() -> None:
    fit = fit_votes(_votes(), iterations=1)
    posterior, prior, skill = fit.posterior, fit.prior, fit.skill
    # Published after one iteration: P(yes) per task, the prior of yes, and the error matrices.
    published = {"t1": 0.65, "t2": 0.74, "t3": 0.13, "t4": 1.00, "t5": 0.05}
    assert {t: round(p, 2) for t, p in posterior.items()} == published
    assert round(prior, 2) == 0.51
    # w2: P(says no | no) = 0.75, P(says yes | yes) = 0.93; w5: 1.00 and 0.39.
    assert tuple(round(x, 2) for x in skill["w2"]) == (0.75, 0.93)
    assert tuple(round(x, 2) for x in skill["w5"]) == (1.00, 0.39)


def test_no_em_step_is_the_published_majority_start() -> None:
    fit = fit_votes(_votes(), iterations=0)
    assert {t: round(p, 2) for t, p in fit.posterior.items()} == {
        "t1": 0.5, "t2": 0.6, "t3": 0.4, "t4": 1.0, "t5": 0.2}
    assert round(fit.prior, 2) == 0.54


def _simulated(seed: int, tasks: int = 100, readers: int = 3) -> list[tuple[object, str, bool]]:
    """Three readers of unequal skill, each missing a tenth of the cases."""
    rng = np.random.default_rng(seed)
    truth = rng.random(tasks) < 0.6
    sensitivity, specificity = rng.uniform(0.6, 0.95, readers), rng.uniform(0.6, 0.95, readers)
    votes: list[tuple[object, str, bool]] = []
    for task in range(tasks):
        for r in range(readers):
            if rng.random() < 0.9:
                passes = specificity[r] if truth[task] else 1 - sensitivity[r]
                votes.append((task, f"r{r}", bool(rng.random() < passes)))
    return votes


def _crowdkit(votes: list[tuple[object, str, bool]], **options: float) -> pd.Series:
    from crowdkit.aggregation import DawidSkene

    frame = pd.DataFrame([(t, w, "pass" if p else "fail") for t, w, p in votes],
                         columns=["task", "worker", "label"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DawidSkene(**options).fit(frame)  # type: ignore[arg-type]
    assert model.probas_ is not None
    return model.probas_["pass"]


def test_the_fit_is_crowdkits_where_crowdkit_runs_to_convergence() -> None:
    for seed in (2, 8):  # sets where crowd-kit, never stopped by its tolerance, converges soon
        votes = _simulated(seed)
        theirs = _crowdkit(votes, n_iter=100_000, tol=0.0)
        ours = fit_votes(votes)
        assert ours.converged
        assert max(abs(ours.posterior[t] - p) for t, p in theirs.items()) < 1e-4, seed


def test_em_runs_on_where_crowdkits_stopping_rule_stops_it_early() -> None:
    """Seed 15: crowd-kit's default rule (a rise in its per-read bound below 1e-5) stops
    after five steps with posteriors up to 0.53 from the fit's. Ours goes on to a fixed point
    of EM whose log-likelihood is higher."""
    votes = _simulated(15)
    theirs = _crowdkit(votes, n_iter=100, tol=1e-5)
    ours = fit_votes(votes)
    assert ours.converged and ours.iterations > 100
    assert max(abs(ours.posterior[t] - p) for t, p in theirs.items()) > 0.4
    # one more EM step from our fit moves nothing, and no shorter run reaches its likelihood
    again = fit_votes(votes, iterations=ours.iterations + 50)
    assert max(abs(again.posterior[t] - p) for t, p in ours.posterior.items()) < 1e-6
    assert fit_votes(votes, iterations=5).log_likelihood < ours.log_likelihood - 0.1


def test_two_readers_give_no_skill_weighted_reference(demo_engine: Engine) -> None:
    """With two readers the model cannot tell which of them is in error: no figure."""
    from sqlmodel import Session

    from app.agreement.dawid_skene import skill_weighted
    from app.agreement.reads import load
    from tests.agreement.test_report import answer_all
    from tests.studies.conftest import make_study

    setup = make_study(demo_engine, design=Design.validation, readers=2)
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 8 + ["no"] * 8,
                                    "reader-1": ["yes", "no"] * 8})
    with Session(demo_engine) as session:
        data = load(session, setup.study)
    assert skill_weighted(data, setup.study.primary_question) is None


def test_a_reader_who_passes_everything_counts_for_less() -> None:
    """Two careful readers and one who passes every case: where the careful two fail a case
    the careless one passed, the model sides with them and rates the careless one's
    specificity high but sensitivity near zero."""
    votes: list[tuple[object, str, bool]] = []
    for case in range(40):
        truth = case % 3 != 0
        votes += [(case, "careful-a", truth), (case, "careful-b", truth if case != 5 else not truth),
                  (case, "careless", True)]
    fit = fit_votes(votes)
    posterior, skill = fit.posterior, fit.skill
    assert all((posterior[c] > 0.5) == (c % 3 != 0) for c in range(40) if c != 5)
    assert skill["careless"][0] < 0.05 and skill["careless"][1] > 0.95
    assert skill["careful-a"][0] > 0.9


def test_the_agreement_page_shows_each_figure_under_both_references(demo_engine: Engine,
                                                                   tmp_path: Path) -> None:
    from bs4 import BeautifulSoup

    from app.web.main import create_app
    from tests.accounts import token_client
    from tests.agreement.test_report import answer_all
    from tests.config import server_settings
    from tests.studies.conftest import make_study

    setup = make_study(demo_engine, design=Design.validation, readers=3)
    yes_no = ["yes", "no", "yes", "yes", "cannot_assess", "no", "yes", "no"] * 2
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 12 + ["no"] * 4,
                                    "reader-1": yes_no, "reader-2": yes_no[::-1]})
    client = token_client(create_app(server_settings(tmp_path), demo_engine), demo_engine)
    shell = BeautifulSoup(client.get(f"/studies/{setup.study.id}/agreement").text, "html.parser")
    placeholder = shell.select_one("#skill-weighted[hx-trigger=load]")
    assert placeholder is not None  # the fit comes after the page, as a fragment
    page = BeautifulSoup(client.get(placeholder["hx-get"]).text, "html.parser")
    rows = page.select("#skill-weighted-figures tr[data-figure]")
    assert [r["data-figure"] for r in rows] == ["agreement", "too_strict", "too_lenient"]
    assert all("/" in cell.text for r in rows for cell in r.select("td")[:2])
    readers = [r["data-reader"] for r in page.select("#skill-weighted-readers tr[data-reader]")]
    assert readers == ["reader-0", "reader-1", "reader-2"]
    assert page.select_one("#skill-weighted-differ") is not None
