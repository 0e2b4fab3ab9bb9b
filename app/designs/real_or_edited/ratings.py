"""The arithmetic of a real-or-edited study (a visual Turing test): the reader's answer as one
rating, and the ratings in the iMRMC long format that MRMC software reads.

A reader answers "real" or "edited" with a confidence of 1 (a guess) to 5 (certain). As one
ROC rating, higher meaning more sure the image was edited (Metz's convention for a two-
choice answer with confidence): edited at confidence c is 5 + c, real at confidence c is
6 - c, so 1 is "certainly real" and 10 "certainly edited". The middle point between 5 and 6
is the reader's own call.
"""

from collections.abc import Iterable, Iterator

LEVELS = 10
MIDDLE = 5.5  # ratings above it are the reader's "edited"


def rating(edited: bool, confidence: int) -> int:
    if not 1 <= confidence <= 5:
        raise ValueError(f"confidence is 1 to 5, not {confidence}")
    return 5 + confidence if edited else 6 - confidence


def imrmc_lines(truth: dict[int, bool], ratings: Iterable[tuple[str, int, int]], *,
                description: str, modality: str = "1") -> Iterator[str]:
    """The iMRMC input format: free text, the counts, then after ``BEGIN DATA:`` one line per
    case with its truth (reader -1, modality 0; 1 = edited) and one per rating
    (reader, case, modality, score). Case ids are integers, as the readers of the format
    require; reader ids are account names (letters, digits, '.', '_', '-': no comma)."""
    rows = list(ratings)
    readers = sorted({reader for reader, _, _ in rows})
    for reader in readers:
        if "," in reader or not reader:
            raise ValueError(f"reader id {reader!r} cannot go in a comma-separated line")
    yield description.replace("\n", " ")
    yield ""
    yield f"NR: {len(readers)}"
    yield f"N0: {sum(1 for edited in truth.values() if not edited)}"
    yield f"N1: {sum(1 for edited in truth.values() if edited)}"
    yield "NM: 1"
    yield ""
    yield "BEGIN DATA:"
    for case, edited in sorted(truth.items()):
        yield f"-1,{case},0,{int(edited)}"
    for reader, case, score in sorted(rows):
        if case not in truth:
            raise ValueError(f"case {case} has a rating but no truth")
        yield f"{reader},{case},{modality},{score}"
