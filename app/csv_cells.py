"""The one CSV writer of every export: text that a spreadsheet would run as a formula is
neutralised, numbers are written as they are.

Readers' comments and imported instructions reach the exports, and Excel, LibreOffice and
Google Sheets run a cell that starts with ``=``, ``+``, ``-`` or ``@`` (tab and carriage
return hide such a start). Such text cells get a leading apostrophe, the form OWASP
recommends, which spreadsheets show as text and statistics packages read as one character
more. Numeric values (int, float, and text that is only a number) are left alone, so a
negative kappa stays a number.
"""

import csv
import io
import re
from collections.abc import Iterable, Iterator
from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def neutralise(value: Any) -> Any:
    """The cell as it is safe to write: text starting like a formula gets an apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


class CsvRows:
    """Rows written as CSV text and taken back out a chunk at a time, for streaming."""

    def __init__(self) -> None:
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer)

    def writerow(self, row: Iterable[Any]) -> None:
        self._writer.writerow([neutralise(cell) for cell in row])

    def take(self) -> str:
        text = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        return text


def iter_dict_csv(found: list[dict[str, Any]]) -> Iterator[str]:
    """Dict rows as CSV: the header is every key in the order first seen, blanks where a row
    lacks one."""
    if not found:
        yield ""
        return
    fields = list(dict.fromkeys(k for row in found for k in row))
    rows = CsvRows()
    rows.writerow(fields)
    for row in found:
        rows.writerow(row.get(f, "") for f in fields)
    yield rows.take()
