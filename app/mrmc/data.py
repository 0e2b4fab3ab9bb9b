"""An MRMC data set: ratings per modality x reader x case and each case's truth, read from the
CSV the reference data uses (``modality, reader, case, truth, rating``).

Bad input is refused with the file, the row and the problem in one line (MrmcInputError),
before any figure is computed.
"""

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

COLUMNS = ("modality", "reader", "case", "truth", "rating")


class MrmcInputError(ValueError):
    """A file that cannot be analysed; the message names the file, the row and the problem."""


@dataclass(frozen=True)
class MrmcData:
    modalities: tuple[str, ...]
    readers: tuple[str, ...]
    cases: tuple[str, ...]
    truth: np.ndarray  # per case: True diseased
    ratings: np.ndarray  # modalities x readers x cases; -inf is "no mark", lowest of all

    @property
    def normal(self) -> int:
        return int((~self.truth).sum())

    @property
    def abnormal(self) -> int:
        return int(self.truth.sum())


def _rating(text: str) -> float:
    value = float(text)  # "-Inf" and "inf" read as floats; "abc" raises
    if math.isnan(value) or value == math.inf:
        raise ValueError(text)
    return value


def read_csv(path: Path) -> MrmcData:
    """The file's ratings, fully crossed: every modality x reader x case once."""
    try:
        handle = path.open(newline="", encoding="utf-8-sig")
    except OSError as error:
        raise MrmcInputError(f"{path}: cannot be read ({error.strerror or error})") from None
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise MrmcInputError(f"{path}: row 1: missing column(s) {', '.join(missing)} "
                                 f"(the header needs {', '.join(COLUMNS)})")
        return rows_to_data(path, ((n, row) for n, row in enumerate(reader, start=2)))


def read_ratings(path: Path) -> MrmcData:
    """A ratings CSV, or an iMRMC input file (the app writes one for each real-or-edited
    study): told apart by iMRMC's ``BEGIN DATA:`` line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        why = getattr(error, "strerror", None) or error
        raise MrmcInputError(f"{path}: cannot be read ({why})") from None
    if "BEGIN DATA:" not in text:
        return read_csv(path)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "BEGIN DATA:") + 1
    truth: dict[str, str] = {}
    ratings: list[tuple[int, dict[str, str]]] = []
    for number, line in enumerate(lines[start:], start=start + 1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 4:
            raise MrmcInputError(f"{path}: row {number}: an iMRMC data line has four fields "
                                 "(reader, case, modality, score)")
        reader, case, modality, score = parts
        if reader == "-1":
            truth[case] = score
        else:
            ratings.append((number, {"modality": modality, "reader": reader, "case": case,
                                     "rating": score}))
    for _, row in ratings:
        row["truth"] = truth.get(row["case"], "")
    return rows_to_data(path, iter(ratings))


def rows_to_data(path: Path | str, rows: object) -> MrmcData:
    """Rows numbered as in the file (the header is row 1)."""
    truth: dict[str, bool] = {}
    seen: dict[tuple[str, str, str], float] = {}
    for number, row in rows:  # type: ignore[attr-defined]
        modality, reader, case = (str(row.get(c) or "").strip() for c in ("modality", "reader", "case"))
        if not modality or not reader or not case:
            raise MrmcInputError(f"{path}: row {number}: modality, reader and case must all be given")
        flag = str(row.get("truth") or "").strip()
        if flag not in ("0", "1"):
            raise MrmcInputError(f"{path}: row {number}: case {case} has no truth: 0 (non-diseased) "
                                 f"or 1 (diseased), not {flag!r}")
        try:
            rating = _rating(str(row.get("rating") or "").strip())
        except ValueError:
            raise MrmcInputError(f"{path}: row {number}: rating {row.get('rating')!r} is not a number "
                                 "(-Inf marks no rating)") from None
        if truth.setdefault(case, flag == "1") != (flag == "1"):
            raise MrmcInputError(f"{path}: row {number}: case {case} is given two truths")
        key = (modality, reader, case)
        if key in seen:
            raise MrmcInputError(f"{path}: row {number}: modality {modality}, reader {reader}, "
                                 f"case {case} is rated twice")
        seen[key] = rating
    if not seen:
        raise MrmcInputError(f"{path}: no rating rows")
    modalities = tuple(sorted({m for m, _, _ in seen}, key=_natural))
    readers = tuple(sorted({r for _, r, _ in seen}, key=_natural))
    cases = tuple(sorted(truth, key=_natural))
    ratings = np.full((len(modalities), len(readers), len(cases)), np.nan)
    at_m = {m: i for i, m in enumerate(modalities)}
    at_r = {r: i for i, r in enumerate(readers)}
    at_c = {c: i for i, c in enumerate(cases)}
    for (m, r, c), value in seen.items():
        ratings[at_m[m], at_r[r], at_c[c]] = value
    gaps = np.argwhere(np.isnan(ratings))
    if len(gaps):
        m, r, c = gaps[0]
        raise MrmcInputError(f"{path}: reader {readers[r]} has no rating of case {cases[c]} in "
                             f"modality {modalities[m]} ({len(gaps)} missing in all): the analysis "
                             "is fully crossed, every reader reads every case in every modality")
    flags = np.array([truth[c] for c in cases])
    if flags.all() or not flags.any():
        raise MrmcInputError(f"{path}: every case has truth {int(flags[0])}: an AUC needs "
                             "diseased and non-diseased cases")
    return MrmcData(modalities, readers, cases, flags, ratings)


def _natural(text: str) -> tuple[int, float, str]:
    """Numbers in number order, then text."""
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)
