"""One self-signed marker for the tests' exports: as a server with no certificate of the
operator's signs (made once per test process; the key pair takes milliseconds, but every
export would otherwise make its own)."""

import tempfile
from functools import cache
from pathlib import Path

from app.provenance.marker import Marker
from app.provenance.signing import own_identity


@cache
def signing_marker() -> Marker:
    return Marker(own_identity(Path(tempfile.mkdtemp(prefix="signer-")) / "c2pa"))
