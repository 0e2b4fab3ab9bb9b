"""One rubric for the judge and the readers: the judge prompt carries every definition."""

from pipeline import prompts
from pipeline.rubric import ENTRIES, MODALITIES, rubric
from pipeline.vocabulary import DIMENSIONS, WEIGHTS


def test_every_question_is_defined_with_failures_for_every_modality() -> None:
    questions = rubric()
    assert tuple(questions) == ENTRIES
    for name in DIMENSIONS:
        q = questions[name]
        assert q.definition.endswith("?") and q.yes_means
        assert q.weight == WEIGHTS[name]  # type: ignore[index]
        assert all(q.failures_for(m) for m in MODALITIES), name
    assert questions["overall"].weight is None and questions["confidence"].failures == {}


def test_the_judge_is_asked_the_readers_questions_in_the_same_words() -> None:
    for modality in MODALITIES:
        text = prompts.judge(modality, "Pleural_Effusion", "add", "Add an effusion.").text
        for name in DIMENSIONS:
            q = rubric()[name]
            assert q.definition in text and q.yes_means in text
            assert all(f in text for f in q.failures_for(modality))
        other = next(m for m in MODALITIES if m != modality)
        assert rubric()["fidelity"].failures_for(other)[0] not in text
        assert rubric()["overall"].definition in text


def test_the_rubric_says_nothing_a_blinded_reading_screen_must_not() -> None:
    """Readers see the rubric beside the images; the blinding checks of the reading screen
    look for these words in everything on it."""
    for q in rubric().values():
        words = " ".join([q.definition, q.yes_means, *sum(q.failures.values(), ())]).lower()
        assert not any(w in words for w in ("qualified", "success", "round")), q.name
