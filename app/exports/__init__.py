"""Training exports: preference pairs and a curated subset of accepted edits, each a folder
with the images, JSON Lines, Parquet and a manifest, written as a stream; and runs written
back out in the generation scripts' layout (runs.py)."""

from app.exports.curated import CuratedFilter, ReadersRule, write_curated
from app.exports.folder import ExportError, ExportSummary
from app.exports.pairs import PairRule, write_pairs
from app.exports.runs import ExportedRuns, export_runs

__all__ = ["CuratedFilter", "ExportError", "ExportSummary", "ExportedRuns", "PairRule",
           "ReadersRule", "export_runs", "write_curated", "write_pairs"]
