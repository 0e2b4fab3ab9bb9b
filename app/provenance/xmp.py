"""The IPTC digital source type in an image's XMP packet, for the tools that read XMP but
not C2PA. Written into the file's own container (a PNG iTXt chunk, a JPEG APP1 segment, a
WebP XMP chunk) without decoding the image, so no pixel changes; any XMP already there is
replaced. It goes in before the C2PA manifest, whose hash then covers it."""

import struct
import zlib
from xml.sax.saxutils import escape

XMP_NS = "http://ns.adobe.com/xap/1.0/\x00"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_XMP_KEYWORD = b"XML:com.adobe.xmp"


class XmpError(ValueError):
    """The bytes are not a PNG, JPEG or WebP whose container can be read."""


def packet(source_type: str, description: str) -> bytes:
    return (
        '<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n'
        '<x:xmpmeta xmlns:x="adobe:ns:meta/">\n'
        ' <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
        '  <rdf:Description rdf:about=""\n'
        '    xmlns:Iptc4xmpExt="http://iptc.org/std/Iptc4xmpExt/2008-02-29/"\n'
        '    xmlns:dc="http://purl.org/dc/elements/1.1/">\n'
        f'   <Iptc4xmpExt:DigitalSourceType>{escape(source_type)}</Iptc4xmpExt:DigitalSourceType>\n'
        '   <dc:description><rdf:Alt><rdf:li xml:lang="x-default">'
        f'{escape(description)}</rdf:li></rdf:Alt></dc:description>\n'
        '  </rdf:Description>\n'
        ' </rdf:RDF>\n'
        '</x:xmpmeta>\n'
        '<?xpacket end="w"?>').encode()


def with_xmp(data: bytes, mime: str, xmp: bytes) -> bytes:
    if mime == "image/png":
        return _png(data, xmp)
    if mime == "image/jpeg":
        return _jpeg(data, xmp)
    if mime == "image/webp":
        return _webp(data, xmp)
    raise XmpError(f"no XMP is written into {mime}")


def _png(data: bytes, xmp: bytes) -> bytes:
    if not data.startswith(PNG_SIGNATURE):
        raise XmpError("not a PNG")
    chunks, at = [], len(PNG_SIGNATURE)
    while at < len(data):
        if at + 8 > len(data):
            raise XmpError("a PNG chunk is cut short")
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        end = at + 12 + length
        if end > len(data):
            raise XmpError("a PNG chunk is cut short")
        body = data[at + 8:at + 8 + length]
        if not (kind == b"iTXt" and body.startswith(PNG_XMP_KEYWORD + b"\x00")):
            chunks.append(data[at:end])
        at = end
        if kind == b"IEND":
            break
    if not chunks or chunks[0][4:8] != b"IHDR":
        raise XmpError("a PNG that does not start with IHDR")
    # keyword, no compression, no language tag, no translated keyword, then the text
    body = PNG_XMP_KEYWORD + b"\x00\x00\x00\x00\x00" + xmp
    chunk = struct.pack(">I", len(body)) + b"iTXt" + body + struct.pack(
        ">I", zlib.crc32(b"iTXt" + body) & 0xFFFFFFFF)
    return PNG_SIGNATURE + chunks[0] + chunk + b"".join(chunks[1:])


def _jpeg(data: bytes, xmp: bytes) -> bytes:
    if not data.startswith(b"\xff\xd8"):
        raise XmpError("not a JPEG")
    body = XMP_NS.encode("latin-1") + xmp
    if len(body) + 2 > 0xFFFF:
        raise XmpError("the XMP packet is too long for one JPEG segment")
    segment = b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body
    kept, at, insert_at = [b"\xff\xd8"], 2, 1
    # Every segment before the scan (SOS) has a length; the scan and what follows are kept
    # as they are.
    while at + 4 <= len(data) and data[at] == 0xFF and data[at + 1] != 0xDA:
        marker = data[at + 1]
        length = struct.unpack(">H", data[at + 2:at + 4])[0]
        piece = data[at:at + 2 + length]
        if length < 2 or len(piece) < 2 + length:
            raise XmpError("a JPEG segment is cut short")
        if not (marker == 0xE1 and piece[4:].startswith(XMP_NS.encode("latin-1"))):
            kept.append(piece)
            if marker == 0xE0 and len(kept) == 2:  # after JFIF's APP0, which must come first
                insert_at = 2
        at += 2 + length
    kept.insert(insert_at, segment)
    return b"".join(kept) + data[at:]


def _webp(data: bytes, xmp: bytes) -> bytes:
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WEBP":
        raise XmpError("not a WebP")
    chunks, at = [], 12
    while at + 8 <= len(data):
        kind, length = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        end = at + 8 + length + (length & 1)
        if at + 8 + length > len(data):
            raise XmpError("a WebP chunk is cut short")
        if kind != b"XMP ":
            chunks.append((kind, data[at + 8:at + 8 + length]))
        at = end
    if not chunks:
        raise XmpError("a WebP with no image")
    if chunks[0][0] == b"VP8X":
        flags = chunks[0][1][0] | 0x04
        chunks[0] = (b"VP8X", bytes([flags]) + chunks[0][1][1:])
    else:  # the simple format: the extended header says the canvas and that XMP follows
        width, height = _webp_size(chunks[0])
        header = bytes([0x04, 0, 0, 0]) + (width - 1).to_bytes(3, "little") \
            + (height - 1).to_bytes(3, "little")
        chunks.insert(0, (b"VP8X", header))
    chunks.append((b"XMP ", xmp))
    body = b"WEBP" + b"".join(kind + struct.pack("<I", len(payload)) + payload
                              + (b"\x00" if len(payload) & 1 else b"") for kind, payload in chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _webp_size(chunk: tuple[bytes, bytes]) -> tuple[int, int]:
    kind, payload = chunk
    if kind == b"VP8 " and len(payload) >= 10:
        return (struct.unpack("<H", payload[6:8])[0] & 0x3FFF,
                struct.unpack("<H", payload[8:10])[0] & 0x3FFF)
    if kind == b"VP8L" and len(payload) >= 5:
        bits = int.from_bytes(payload[1:5], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    raise XmpError("a WebP whose size cannot be read")
