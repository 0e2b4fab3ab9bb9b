"""`medbanana audit verify`: the chain, record by record, then every row it vouches for.

A record fits when its ``prev`` is the digest of the record before it and its digest is that
of its content; a vouched row fits when its digest is the one recorded, and every such row
stored after the log began has a record. The first thing that does not fit is named: the
earliest record (or, for a row with no record at all, the row)."""

import json
from dataclasses import dataclass, field

from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from app.audit.chain import GENESIS, record_digest
from app.audit.rows import VOUCHED, row_digest, vouched_table
from app.models import AuditRecord

BATCH = 5000


@dataclass
class Verdict:
    records: int
    head: str
    problem: str | None = None
    rows_checked: int = 0
    # Rows stored before the log began, which it cannot vouch for, by table.
    before_the_log: dict[str, int] = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        return self.problem is None


def verify(session: Session) -> Verdict:
    prev, count, started = GENESIS, 0, False
    vouched: dict[tuple[str, int], tuple[int, str]] = {}
    before: dict[str, int] = {}
    query = select(AuditRecord).order_by(col(AuditRecord.id)).execution_options(yield_per=BATCH)
    for record in session.exec(query):
        count += 1
        what = f"record {record.id} ({record.action}, {record.at:%Y-%m-%d %H:%M:%S})"
        if record.prev != prev:
            return Verdict(count, prev, f"{what} does not follow the record before it: records "
                                        "were removed, inserted or reordered")
        if record_digest(record) != record.digest:
            return Verdict(count, prev, f"{what} was changed after it was written: its digest is "
                                        "not that of its content")
        body = json.loads(record.body)
        if record.action == "log started" and not started:
            before, started = {k: int(v) for k, v in body["rows_before_the_log"].items()}, True
        row = body.get("row")
        if isinstance(row, dict):
            vouched[(row["table"], int(row["id"]))] = (record.id or 0, row["sha256"])
        prev = record.digest
    verdict = Verdict(count, prev)
    problems: list[tuple[float, str]] = []
    for name in VOUCHED:
        table = vouched_table(name, session.connection())
        predating = 0
        for values in session.execute(core_select(table).order_by(table.c.id)
                                      .execution_options(yield_per=BATCH)).mappings():
            row_id = int(values["id"])
            found = vouched.pop((name, row_id), None)
            if found is None:
                if row_id <= before.get(name, 0) or not started:
                    predating += 1
                else:
                    problems.append((float("inf"), f"{name} {row_id} has no record in the log: it "
                                                   "was stored without one, or slipped in"))
                continue
            verdict.rows_checked += 1
            if row_digest(table, dict(values)) != found[1]:
                problems.append((found[0], f"record {found[0]}: {name} {row_id} no longer "
                                           "matches the digest recorded for it"))
        verdict.before_the_log[name] = predating
    for (name, row_id), (record_id, _) in vouched.items():
        problems.append((record_id, f"record {record_id}: {name} {row_id} is gone"))
    if problems:
        verdict.problem = min(problems)[1]
    return verdict
