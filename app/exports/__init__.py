"""Training exports: preference pairs and a curated subset of accepted edits, each a folder
with the images, JSON Lines, Parquet and a manifest, written as a stream."""

from app.exports.curated import CuratedFilter, ReadersRule, write_curated
from app.exports.folder import ExportError, ExportSummary
from app.exports.pairs import PairRule, write_pairs

__all__ = ["CuratedFilter", "ExportError", "ExportSummary", "PairRule", "ReadersRule",
           "write_curated", "write_pairs"]
