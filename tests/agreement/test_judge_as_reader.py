"""The judge as one more reader of a validation study: each reader's accuracy against the
others' majority, the judge's against the same reference, and the random-reader interval of
the difference (the single-treatment analysis is held to RJafroc in tests/mrmc)."""

import numpy as np
import pytest

from app.agreement.alternative_annotator import TOO_FEW
from app.agreement.judge_as_reader import judge_as_reader, kappa_z
from app.agreement.reads import Case, Read, StudyReads
from app.mrmc.standalone import compare


def case(item: int, image: int, judge: bool | None) -> Case:
    return Case(item_id=item, uid=f"u{item}", task_id=item, task_key=f"t{item}", source_image_id=image,
                modality="chest_xray", disease="nodule", direction="add", round=1,
                judge={} if judge is None else {"overall": judge})


def read(item: int, reader: str, accept: bool | None, repeat: bool = False) -> Read:
    answer = "cannot_assess" if accept is None else "accept" if accept else "reject"
    return Read(item_id=item, reader=reader, answers={"overall": answer}, repeat=repeat,
                time_on_case_ms=1000, version=1)


def simulated(readers: int, cases: int, reader_noise: float, judge_noise: float,
              seed: int = 3, per_image: int = 1) -> StudyReads:
    rng = np.random.default_rng(seed)
    truth = rng.random(cases) < 0.6
    names = [f"r{j}" for j in range(readers)]
    return StudyReads(
        [case(i, i // per_image, bool(t) ^ bool(rng.random() < judge_noise)) for i, t in enumerate(truth)],
        [read(i, n, bool(t) ^ bool(rng.random() < reader_noise)) for i, t in enumerate(truth) for n in names],
        names)


def test_accuracy_against_the_others_and_the_judge_on_the_same_cases() -> None:
    cases = [case(0, 0, True), case(1, 1, False), case(2, 2, True), case(3, 3, None)]
    reads = [read(0, "a", True), read(0, "b", True), read(0, "c", False),
             read(1, "a", False), read(1, "b", True), read(1, "c", True),
             read(2, "a", True), read(2, "b", None), read(2, "c", True),
             read(3, "a", True), read(3, "b", True), read(3, "c", True),
             read(0, "c", True, repeat=True)]
    result = judge_as_reader(StudyReads(cases, reads, ["a", "b", "c"]), "overall")
    found = {r.reader: r for r in result.readers}
    # a: case 0 (others True/False tie: out), case 1 (others True: a wrong, judge wrong),
    # case 2 (other c True: both right); case 3 has no judge verdict.
    assert (found["a"].cases, found["a"].correct, found["a"].judge_correct) == (2, 1, 1)
    # b: case 0 (a, c tie: out), case 1 (a False, c True: tie: out); case 2 "cannot assess".
    assert "b" not in found and result.unscored == ["b"]
    # c: case 0 (a, b True: c wrong, judge right), case 1 (a False, b True: out), case 2 (a True).
    assert (found["c"].cases, found["c"].correct, found["c"].judge_correct) == (2, 1, 2)


def test_a_judge_that_is_the_truth_beats_noisy_readers_for_readers_in_general() -> None:
    result = judge_as_reader(simulated(4, 300, 0.2, 0.0), "overall")
    v = result.versus
    assert v is not None and v.ci[1] < 0 and v.p < 0.05
    assert v.fixed_ci[1] - v.fixed_ci[0] <= v.ci[1] - v.ci[0]  # fixed readers: narrower
    assert result.sentence_random is not None and "judge is more accurate" in result.sentence_random
    assert result.sentence_fixed is not None and "these readers only" in result.sentence_fixed


def test_a_judge_as_good_as_the_readers_is_not_called_different() -> None:
    result = judge_as_reader(simulated(3, 200, 0.1, 0.1, seed=5), "overall")
    assert result.versus is not None and result.versus.ci[0] < 0 < result.versus.ci[1]
    assert "neither is shown better" in (result.sentence_random or "")


def test_images_resampled_whole() -> None:
    """Two cases per source image: the jackknife leaves both out at once, so its interval is
    that of the grouped jackknife computed here by hand."""
    data = simulated(3, 120, 0.15, 0.1, seed=8, per_image=2)
    result = judge_as_reader(data, "overall")
    assert result.clusters == 60 and result.versus is not None
    votes = {n: {r.item_id: r.answers["overall"] == "accept" for r in data.reads if r.reader == n}
             for n in data.readers}
    judge = {c.item_id: c.judge["overall"] for c in data.cases}
    values, jack, jvalues, jjack = [], [], [], []
    for name in data.readers:
        right, jright, image = [], [], []
        for item, own in votes[name].items():
            others = [votes[o][item] for o in data.readers if o != name]
            if sum(others) * 2 == len(others):
                continue
            ref = sum(others) * 2 > len(others)
            right.append(own == ref)
            jright.append(judge[item] == ref)
            image.append(item // 2)
        right_a, jright_a, image_a = np.array(right), np.array(jright), np.array(image)
        values.append(right_a.mean())
        jvalues.append(jright_a.mean())
        jack.append([right_a[image_a != k].mean() for k in range(60)])
        jjack.append([jright_a[image_a != k].mean() for k in range(60)])
    by_hand = compare("judge", tuple(data.readers), np.array(values), np.array(jack),
                      np.array(jvalues), np.array(jjack))
    assert result.versus.ci == pytest.approx(by_hand.ci, abs=1e-12)
    assert result.versus.p == pytest.approx(by_hand.p, abs=1e-12)


def test_one_reader_says_why_there_is_no_interval() -> None:
    data = simulated(1, 50, 0.1, 0.1)
    result = judge_as_reader(data, "overall")
    assert result.versus is None and result.reason is not None and "two readers" in result.reason
    assert result.alt is not None and result.alt.conclusion == TOO_FEW


def test_the_sample_size_table_needs_fewer_cases_with_more_readers() -> None:
    result = judge_as_reader(simulated(3, 150, 0.15, 0.1, seed=11), "overall", margin=0.08)
    cases = [p.cases for _, p in result.sizes if p is not None]
    assert cases and cases == sorted(cases, reverse=True)
    assert result.readers_needed is not None
    assert result.as_dict()["sample_size"]["half_width"] == 0.08  # type: ignore[index]


def test_kappa_z_needs_three_readers() -> None:
    judge = {i: i % 2 == 0 for i in range(40)}
    two = {"a": {i: i % 2 == 0 for i in range(40)}, "b": {i: i % 3 == 0 for i in range(40)}}
    assert kappa_z(two, judge).z is None and "three readers" in (kappa_z(two, judge).why or "")
    three = two | {"c": {i: i % 4 == 0 for i in range(40)}}
    found = kappa_z(three, judge)
    assert found.z is not None and found.judge is not None and found.z > 0
    assert len(found.readers) == 3


def test_the_fixed_view_is_called_narrower_only_when_it_is() -> None:
    from app.agreement.random_reader_words import fixed_width

    assert fixed_width((0.4, 0.6), (0.3, 0.7)).startswith("narrower")
    assert fixed_width((0.3, 0.7), (0.4, 0.6)).startswith("no narrower")


def test_the_precision_sentence_says_what_the_margin_needs() -> None:
    from app.agreement.random_reader_words import precision_sentence
    from app.mrmc.sample_size import Power

    enough = Power(3, 420, 0.0, 0.05, 30.0, 0.0, 0.049)
    text = precision_sentence(3, (-0.1, 0.3), 0.05, 0.2, enough, 2, 14, "source images")
    assert "± 0.200 wide" in text and "about 420 source images (this study has 14)" in text
    text = precision_sentence(2, (-0.1, 0.3), 0.05, 0.2, None, 5, 14, "source images")
    assert "At least 5 readers" in text
    assert "Up to 20 readers" in precision_sentence(2, (-0.1, 0.3), 0.05, 0.2, None, None, 14, "cases")
    assert "already inside" in precision_sentence(6, (0.0, 0.08), 0.05, 0.04, enough, 2, 900, "cases")
    # Narrow by chance: inside the margin, but not as the components predict.
    lucky = precision_sentence(3, (0.63, 0.71), 0.05, 0.18, enough, 2, 12, "cases")
    assert "predict ± 0.180" in lucky and "Do not lean on it" in lucky and "already" not in lucky
