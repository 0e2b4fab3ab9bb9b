"""The order of a reader's cases: no two edits of one source image in a row where another
order allows it."""

import itertools
import random

from app.image_order import apart


def test_two_edits_of_one_image_are_kept_apart_when_they_can_be() -> None:
    image_of = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "c1": "C"}
    order = apart(["a1", "a2", "b1", "a3", "c1"], image_of)
    assert order == ["a1", "b1", "a2", "c1", "a3"]
    assert apart(["a1", "a2"], image_of) == ["a1", "a2"]  # no other order: kept as it was
    assert apart(["a2", "b1"], image_of, before="A") == ["b1", "a2"]  # after an open case of A


def test_a_shuffled_list_of_many_images_never_repeats_an_image_back_to_back() -> None:
    rng = random.Random(4)
    items = [f"{image}-{k}" for image in range(30) for k in range(rng.randint(1, 4))]
    rng.shuffle(items)
    image_of = {item: item.split("-")[0] for item in items}
    order = apart(items, image_of)
    assert sorted(order) == sorted(items)
    assert all(image_of[x] != image_of[y] for x, y in itertools.pairwise(order))


def test_the_first_edit_that_differs_is_not_taken_when_it_leaves_two_of_one_image_together() -> None:
    """Taking the first that differs alone gave B A A (the adaptive study's test met it about
    one run in twenty)."""
    image_of = {"a1": "A", "a2": "A", "b1": "B"}
    assert apart(["b1", "a1", "a2"], image_of) == ["a1", "b1", "a2"]
    assert apart(["b1", "a1", "a2"], image_of, before="A") == ["b1", "a1", "a2"]  # none better


def test_any_list_that_can_be_kept_apart_is() -> None:
    rng = random.Random(9)
    for _ in range(400):
        items = [f"{rng.randint(0, 3)}-{k}" for k in range(rng.randint(1, 7))]
        image_of = {item: item.split("-")[0] for item in items}
        before = rng.choice([None, "0", "1"])
        order = apart(items, image_of, before)
        assert sorted(order) == sorted(items)
        possible = any(all(image_of[x] != image_of[y] for x, y in itertools.pairwise(p))
                       and (before is None or image_of[p[0]] != before)
                       for p in itertools.permutations(items))  # every order: at most 5,040
        kept = all(image_of[x] != image_of[y] for x, y in itertools.pairwise(order)) and (
            before is None or image_of[order[0]] != before)
        assert kept or not possible, (items, before, order)
