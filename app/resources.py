"""Where the templates, static files and migrations are: package data of the wheel.

The folders stay at the top of the checkout and are mapped to the packages app.templates,
app.static and app.migrations (pyproject.toml), so importlib.resources finds them in an
installed wheel and in an editable checkout alike, whatever the working directory.
"""

from importlib.resources import files
from pathlib import Path


def resource_dir(package: str) -> Path:
    """The folder of a resource package, as a real path (Jinja2, Starlette and Alembic need
    one; a zipped install could not give it, so it is refused with a clear message)."""
    found = files(package)
    if not isinstance(found, Path):
        raise RuntimeError(f"{package} is not on the file system ({found}); install the "
                           "wheel unzipped (pip does)")
    return found


TEMPLATES_DIR = resource_dir("app.templates")
STATIC_DIR = resource_dir("app.static")
MIGRATIONS_DIR = resource_dir("app.migrations")
