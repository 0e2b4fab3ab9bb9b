"""A study's source images in a random order fixed when the study was made.

The anytime-valid figures take the study's images in this order (app/agreement/monitoring.py):
the order in which images happen to be completed is no random draw (an image with more cases
completes later), and a share that depends on an image's size then loses its coverage. The
readers' worklists go through the same order block by block (app/studies/study_rows.py), each
reader in an order of their own inside a block, so that the images enter the figures steadily
instead of waiting for the last reads of the study.

The order is a hash of the study's secret (drawn at creation, never shown to a reader) and the
image: it depends on nothing the reads show, and needs nothing stored beyond the secret.
"""

import hashlib
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

# Blocks of the fixed order a reader's worklist follows: fewer blocks keep more of each
# reader's order their own, more blocks let images enter the figures sooner. A block holds
# at least MIN_BLOCK images, so that readers of a small study still read in orders of their own.
BLOCKS = 10
MIN_BLOCK = 10
# A study whose cases are its units (app/studies/allocation.py) reads blocks of this many
# cases, the form's batch of an adaptive study: its figures can stop it within a block of
# the target, and 10 cases still give each reader an order of their own.
CASE_BLOCK = 10


def image_rank(secret: str, cluster: object) -> bytes:
    """An image's place in the study's fixed order."""
    return hashlib.sha256(f"{secret}\x00{cluster}".encode()).digest()


def fixed_order(secret: str, clusters: Iterable[Hashable]) -> list[Hashable]:
    return sorted(set(clusters), key=lambda c: image_rank(secret, c))


def blocks(secret: str, clusters: Iterable[Hashable], size: int | None = None) -> dict[Hashable, int]:
    """Each unit's block in the study's fixed order: BLOCKS blocks of images, or blocks of
    ``size`` units."""
    ordered = fixed_order(secret, clusters)
    if size is not None:
        return {c: i // size for i, c in enumerate(ordered)}
    count = max(1, min(BLOCKS, len(ordered) // MIN_BLOCK))
    return {c: i * count // len(ordered) for i, c in enumerate(ordered)}


T = TypeVar("T", bound=Hashable)


def apart(items: list[T], image_of: Mapping[T, Hashable | None],
          before: Hashable | None = None) -> list[T]:
    """``items`` in their order, except that no two edits of one image follow each other
    where another order allows it: each place takes the first item left whose image differs
    from the one before (``before``: the image of the case just ahead of the list) and leaves
    the rest still placeable so. An adaptive study draws edits, and two edits of one image in
    a row would show a reader what the other edit changed. Taking the first that differs,
    alone, ran into corners: B A A became B A A where A B A keeps them apart."""
    left = list(items)
    counts = Counter(image_of.get(item) for item in left)
    counts.pop(None, None)  # an edit of no known image follows any other
    placed: list[T] = []
    previous = before
    while left:
        item = left.pop(_next(left, image_of, previous, counts))
        placed.append(item)
        previous = image_of.get(item)
        if previous is not None:
            counts[previous] -= 1
    return placed


def _next(left: list[T], image_of: Mapping[T, Hashable | None], previous: Hashable | None,
          counts: Counter[Hashable]) -> int:
    """The first item that differs from ``previous`` and leaves the rest placeable; else the
    first that differs; else the first (no order keeps them apart)."""
    first = None
    for at, item in enumerate(left):
        image = image_of.get(item)
        if image is not None and image == previous:
            continue
        if _placeable(counts, len(left) - 1, image):
            return at
        first = at if first is None else first
    return first or 0


def _placeable(counts: Counter[Hashable], left: int, taken: Hashable | None) -> bool:
    """Whether the ``left`` items after one of image ``taken`` can follow it with no image
    twice in a row: the image just placed fits in every other place, any other in half."""
    for image, count in counts.most_common(2):
        after = count - 1 if image == taken else count
        if after > (left // 2 if image == taken else (left + 1) // 2):
            return False
    return taken is None or counts[taken] - 1 <= left // 2
