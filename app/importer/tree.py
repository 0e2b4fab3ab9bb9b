"""Walk a run root, plan one job per JSON file, and import each in its own transaction."""

from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, text, update
from sqlalchemy.engine import Connection, Engine
from sqlmodel import SQLModel

from app.images.final_metrics import clear_stale_final
from app.importer import layout, paper_format, scripts_format, streams
from app.importer.dirindex import DirIndex, is_within
from app.importer.errors import ImportFileError, RowError
from app.importer.prefetch import one_ahead, prefetched
from app.importer.records import TaskRecord
from app.importer.report import ImportReport, Problem
from app.importer.vectors import filling_vectors
from app.importer.writer import BatchWriter, Roots, WriterState
from app.models import utcnow

T = SQLModel.metadata.tables
# Records written per executemany round; large enough to amortise, small enough for memory.
BATCH_SIZE = 2000
SCRIPTS_FILES = frozenset({"all_conversations.json", "final_prompts.json", "progress.json",
                           "api_failures.json", "failed_summary.json"})
Item = TaskRecord | Problem
Entries = Callable[[streams.Progress], Iterator[Item]]


@dataclass
class FileJob:
    root: Path  # the run root: every file of the job lies inside it
    label: str  # path relative to the run root, as stored in import_file
    paths: list[Path]  # every file whose bytes decide the job's content hash
    file_format: str
    entries: Entries

    @property
    def size(self) -> int:
        return sum(p.stat().st_size for p in self.paths)


def import_tree(engine: Engine, run_root: Path, source_root: Path | None = None, *,
                on_progress: Callable[[int, int], None] | None = None) -> ImportReport:
    """Import every run folder and paper-schema file under ``run_root``.

    Raises ImportFileError, naming the file, when one is unreadable; files before it
    stay imported, and nothing of the bad file is written.
    """
    run_root = _require_folder(run_root, "run root")
    source_root = _require_folder(source_root, "source root") if source_root else None
    report = ImportReport()
    jobs = plan_jobs(run_root, report)
    progress = streams.Progress(sum(job.size for job in jobs), on_progress)
    with engine.begin() as conn:
        roots = Roots(_root_id(conn, "run", run_root), DirIndex(run_root))
        if source_root:
            roots.source_root_id = _root_id(conn, "source", source_root)
            roots.source_index = DirIndex(source_root)
    with engine.connect() as conn, filling_vectors(engine) as filler:
        state = WriterState.load(conn)
        conn.commit()
        with closing(one_ahead(jobs, _digest)) as hashed:  # the thread ends with the import
            for job, digest in hashed:
                indexed = _run_job(conn, job, digest, roots, state, progress, report)
                if filler is not None:
                    filler.add(indexed)
        clear_stale_final(conn)  # a re-imported task may now show an edit not yet measured
        conn.commit()
        if report.tasks_added and conn.dialect.name == "postgresql":
            # The planner's statistics of the tasks, at once rather than at autovacuum's next
            # round: until then a filtered page walked the whole table (43 ms a page on 88K
            # tasks, 4 ms after; ANALYZE takes 0.2 s there).
            conn.execute(text("ANALYZE task"))
            conn.commit()
    return report


def _require_folder(path: Path, what: str) -> Path:
    if not path.is_dir():
        raise ImportFileError(path, f"the {what} is not a folder")
    return path.resolve()


def _root_id(conn: Connection, kind: str, path: Path) -> int:
    table = T["data_root"]
    found = conn.execute(select(table.c.id).where(table.c.path == str(path))).scalar()
    if found is not None:
        return int(found)
    synthetic = (path / layout.SYNTHETIC_MARKER).is_file()
    return int(conn.execute(insert(table).values(
        kind=kind, path=str(path), synthetic=synthetic, created_at=utcnow()
    ).returning(table.c.id)).scalar_one())


def plan_jobs(run_root: Path, report: ImportReport) -> list[FileJob]:
    jobs: list[FileJob] = []
    for folder in sorted(p for p in run_root.iterdir() if p.is_dir()):
        if not _inside(run_root, folder, report):
            continue
        parsed = layout.parse_run_folder(folder.name)
        if parsed:
            context = scripts_format.FolderContext(*parsed)
            jobs.extend(_scripts_jobs(run_root, folder, context, report))
        else:
            jobs.extend(_paper_jobs(run_root, _json_files(run_root, folder, report), report))
    jobs.extend(_paper_jobs(run_root, _json_files(run_root, run_root, report), report))
    return jobs


def _inside(run_root: Path, path: Path, report: ImportReport) -> bool:
    """True for a path that, links followed, stays in the run root; others are never opened."""
    if is_within(path, run_root):
        return True
    report.files_ignored.append(f"{path.relative_to(run_root)} (outside the run root)")
    return False


def _json_files(run_root: Path, folder: Path, report: ImportReport) -> list[Path]:
    candidates = sorted(p for p in folder.iterdir() if p.is_file()
                        and p.suffix in (".json", ".jsonl") and p.name not in SCRIPTS_FILES)
    return [p for p in candidates if _inside(run_root, p, report)]


def _scripts_jobs(run_root: Path, folder: Path, ctx: scripts_format.FolderContext,
                  report: ImportReport) -> list[FileJob]:
    def usable(path: Path) -> bool:
        return path.is_file() and _inside(run_root, path, report)

    progress_path = folder / "progress.json"
    has_progress = usable(progress_path)
    statuses: dict[str, str] = {}

    def load_statuses(progress: streams.Progress) -> None:
        if has_progress and not statuses:
            for key, value in streams.iter_object(run_root, progress_path, progress):
                statuses[key] = value if isinstance(value, str) else ""

    label = f"{folder.name}/all_conversations.json"

    def conversations(progress: streams.Progress) -> Iterator[Item]:
        load_statuses(progress)
        seen: set[str] = set()
        for key, entry in streams.iter_object(run_root, folder / "all_conversations.json", progress):
            if key in seen:  # JSON parsers disagree on which copy wins; neither is guessed
                yield Problem(label, key, "duplicate_key", "the key appears more than once in "
                              "the file; its first entry was imported, this one was not")
                continue
            seen.add(key)
            item = _guard(label, key, scripts_format.parse_conversation, key, entry, ctx)
            if isinstance(item, TaskRecord):
                item.is_current = statuses.get(key) != "api_failed"
            yield item

    api_path = folder / "api_failures.json"
    api_label = f"{folder.name}/api_failures.json"
    has_api = usable(api_path)

    def api_failures(progress: streams.Progress) -> Iterator[Item]:
        load_statuses(progress)
        seen: set[str] = set()
        entries = streams.iter_array(run_root, api_path, progress) if has_api else iter(())
        for entry in entries:
            key = str(entry.get("task", "?")) if isinstance(entry, dict) else "?"
            item = _guard(api_label, key, scripts_format.parse_api_failure, entry, ctx)
            if isinstance(item, TaskRecord):
                seen.add(item.key)
                item.is_current = statuses.get(item.key, "api_failed") == "api_failed"
            yield item
        for key in sorted(k for k, v in statuses.items() if v == "api_failed" and k not in seen):
            yield Problem(api_label, key, "api_failed_unrecoverable", "progress.json says "
                          "api_failed, but api_failures.json has no entry naming its image and disease")

    jobs = []
    conv = folder / "all_conversations.json"
    if usable(conv):
        jobs.append(FileJob(run_root, label, [conv], "scripts", conversations))
    api_paths = [p for p, ok in ((api_path, has_api), (progress_path, has_progress)) if ok]
    if api_paths:
        jobs.append(FileJob(run_root, f"{folder.name}/{api_paths[0].name}", api_paths, "scripts-api",
                            api_failures))
    return jobs


def _paper_jobs(run_root: Path, files: list[Path], report: ImportReport) -> list[FileJob]:
    jobs = []
    for path in files:
        shape = streams.sniff(run_root, path)
        label = str(path.relative_to(run_root))
        if not shape or not _first_is_paper_entry(run_root, path, shape):
            report.files_ignored.append(label)
            continue
        jobs.append(FileJob(run_root, label, [path], f"paper-{shape}",
                            _paper_entries(run_root, path, shape, label)))
    return jobs


def _iter_paper_values(root: Path, path: Path, shape: str,
                       progress: streams.Progress) -> Iterator[Any]:
    if shape == "array":
        yield from streams.iter_array(root, path, progress)
    elif shape == "lines":
        yield from streams.iter_lines(root, path, progress)
    else:
        yield from (value for _key, value in streams.iter_object(root, path, progress))


def _first_is_paper_entry(root: Path, path: Path, shape: str) -> bool:
    try:
        first = next(_iter_paper_values(root, path, shape, streams.Progress(0, None)), None)
    except ImportFileError:
        return True  # claim it, so that importing it reports the broken JSON
    return paper_format.looks_like_paper_entry(first)


def _paper_entries(root: Path, path: Path, shape: str, label: str) -> Entries:
    def entries(progress: streams.Progress) -> Iterator[Item]:
        for number, entry in enumerate(_iter_paper_values(root, path, shape, progress), start=1):
            yield _guard(label, _paper_key(entry, number), paper_format.parse_paper_entry,
                         entry, label)
    return entries


def _paper_key(entry: Any, number: int) -> str:
    if isinstance(entry, dict) and isinstance(entry.get("image_id"), str):
        return f"{entry['image_id']}-{entry.get('disease')}"
    return f"entry #{number}"


def _guard(label: str, key: str, parse: Callable[..., TaskRecord], *args: Any) -> Item:
    """Parse one entry; a malformed one becomes a reported problem, never fatal."""
    try:
        return parse(*args)
    except RowError as error:
        return Problem(label, key, "malformed", str(error))


def _digest(job: FileJob) -> str:
    return streams.file_digest(job.root, job.paths)


def _run_job(conn: Connection, job: FileJob, digest: str, roots: Roots, state: WriterState,
             progress: streams.Progress, report: ImportReport) -> list[int]:
    """One file (of content hash ``digest``), one transaction on ``conn``: all of it is
    written, or none of it. Returns the tasks whose search documents it wrote."""
    table = T["import_file"]
    seen = conn.execute(select(table.c.id).where(
        table.c.root_id == roots.run_root_id, table.c.relpath == job.label,
        table.c.sha256 == digest)).first()
    conn.commit()
    if seen:
        report.files_unchanged += 1
        progress.advance(job.size)
        return []
    try:
        with conn.begin():
            indexed = _write_job(conn, job, digest, roots, state, progress, report)
    except BaseException:
        # The transaction rolled back, so the caches may name rows that do not exist.
        fresh = WriterState.load(conn)
        conn.commit()
        state.__dict__.update(fresh.__dict__)
        raise
    report.files_imported += 1
    return indexed


def _write_job(conn: Connection, job: FileJob, digest: str, roots: Roots, state: WriterState,
               progress: streams.Progress, report: ImportReport) -> list[int]:
    table = T["import_file"]
    file_id = conn.execute(insert(table).values(
        root_id=roots.run_root_id, relpath=job.label, file_format=job.file_format, sha256=digest,
        size=job.size, runs_added=0, problems=0, imported_at=utcnow()).returning(table.c.id)
    ).scalar_one()
    writer = BatchWriter(conn, state, roots, file_id, job.label, report)
    try:
        batches = _batches(job.entries(progress), BATCH_SIZE)
        if conn.dialect.name == "postgresql":
            batches = prefetched(batches)
        for batch in batches:
            records = []
            for item in batch:
                if isinstance(item, Problem):
                    writer.problem(item.task_key, item.kind, item.detail)
                else:
                    records.append(item)
            writer.write(records)
        writer.write([])  # flushes problems reported after the last record
    except BaseException:
        writer.close(failing=True)  # waited for before the rollback; the first error is raised
        raise
    writer.close()  # the search documents in before the commit
    conn.execute(update(table).where(table.c.id == file_id).values(
        runs_added=writer.runs_added, problems=writer.problems))
    return writer.indexed


def _batches(records: Iterable[Item], size: int) -> Iterator[list[Item]]:
    batch: list[Item] = []
    for record in records:
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
