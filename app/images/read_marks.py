"""Each blinded read gets its image files with bytes of their own and the very same pixels.

A hidden repeat showed bytes equal to its first read's, so a reader who hashed what they
were shown could find the repeats and copy their first answers. A read's mark is a digest
of the read: in a JPEG it fills bytes after the end-of-image marker (taking the place of the
trailing zero padding of a real-or-edited image, so its length stays a whole number of
size steps), and in a PNG it is a private ancillary chunk before IEND. Decoders ignore both.
"""

import hashlib
import struct
import zlib

from app.images.blinded import SIZE_STEP

MARK_BYTES = 16
_PNG = b"\x89PNG\r\n\x1a\n"
# A private, ancillary, safe-to-copy PNG chunk type: lowercase first, second and fourth
# letters, an uppercase third (reserved bit clear), as the PNG specification requires.
_CHUNK = b"mbRd"


def read_mark(read: str, what: str) -> bytes:
    return hashlib.blake2b(f"{read}\x00{what}".encode(), digest_size=MARK_BYTES).digest()


def marked(data: bytes, mark: bytes) -> bytes:
    """The image with the read's mark; bytes that are neither JPEG nor PNG as they are."""
    if data.startswith(_PNG) and data[-12:-8] == b"\x00\x00\x00\x00" and data[-8:-4] == b"IEND":
        chunk = struct.pack(">I", len(mark)) + _CHUNK + mark
        chunk += struct.pack(">I", zlib.crc32(_CHUNK + mark) & 0xFFFFFFFF)
        return data[:-12] + chunk + data[-12:]
    if data.startswith(b"\xff\xd8"):
        end = data.rfind(b"\xff\xd9")
        tail = data[end + 2:] if end >= 0 else b""
        if len(tail) >= len(mark) and not tail.strip(b"\x00"):
            return data[:len(data) - len(mark)] + mark  # the padding's length is kept
        if len(data) % SIZE_STEP == 0:  # padded to a whole step with too little room
            return data + bytes(SIZE_STEP - len(mark)) + mark
        return data + mark
    return data
