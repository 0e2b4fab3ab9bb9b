"""Import Med-Banana runs (the scripts' layout and the paper's schema) into the database."""

from app.importer.errors import ImportFileError
from app.importer.report import ImportReport
from app.importer.tree import import_tree

__all__ = ["ImportFileError", "ImportReport", "import_tree"]
