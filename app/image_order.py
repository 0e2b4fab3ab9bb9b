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
from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

# Blocks of the fixed order a reader's worklist follows: fewer blocks keep more of each
# reader's order their own, more blocks let images enter the figures sooner. A block holds
# at least MIN_BLOCK images, so that readers of a small study still read in orders of their own.
BLOCKS = 10
MIN_BLOCK = 10


def image_rank(secret: str, cluster: object) -> bytes:
    """An image's place in the study's fixed order."""
    return hashlib.sha256(f"{secret}\x00{cluster}".encode()).digest()


def fixed_order(secret: str, clusters: Iterable[Hashable]) -> list[Hashable]:
    return sorted(set(clusters), key=lambda c: image_rank(secret, c))


def blocks(secret: str, clusters: Iterable[Hashable]) -> dict[Hashable, int]:
    """Each image's block (0 to BLOCKS - 1) in the study's fixed order."""
    ordered = fixed_order(secret, clusters)
    count = max(1, min(BLOCKS, len(ordered) // MIN_BLOCK))
    return {c: i * count // len(ordered) for i, c in enumerate(ordered)}


T = TypeVar("T", bound=Hashable)


def apart(items: list[T], image_of: Mapping[T, Hashable | None],
          before: Hashable | None = None) -> list[T]:
    """``items`` in their order, except that no two edits of one image follow each other
    where another order allows it: each place takes the first item left whose image differs
    from the one before (``before``: the image of the case just ahead of the list). An
    adaptive study draws edits, and two edits of one image in a row would show a reader
    what the other edit changed."""
    left = list(items)
    placed: list[T] = []
    previous = before
    while left:
        at = next((i for i, item in enumerate(left) if image_of.get(item) != previous
                   or image_of.get(item) is None), 0)
        item = left.pop(at)
        placed.append(item)
        previous = image_of.get(item)
    return placed
