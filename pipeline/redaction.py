"""Secrets taken out of any text that is stored or logged (upstream errors echo API keys)."""

import os
import re

REDACTED = "[redacted]"
# Shapes of credentials: Google API keys, ?key= parameters, API-key and bearer headers,
# and long opaque tokens after "token", "key", "secret" or "password".
_SHAPES = re.compile(
    r"AIza[0-9A-Za-z_\-]{20,}"
    r"|(?<=[?&]key=)[^&\s\"']+"
    r"|(?i:(?<=x-goog-api-key: )|(?<=x-goog-api-key\": \")|(?<=bearer ))[A-Za-z0-9._~+/=\-]{8,}"
    r"|(?i:(?<=api_key=)|(?<=api-key=)|(?<=apikey=)|(?<=token=)|(?<=secret=)|(?<=password=))"
    r"[^&\s\"',;]+"
)
# Environment variables whose values are secrets wherever they appear, in any shape.
SECRET_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "MEDBANANA_GEMINI_API_KEY",
                    "MEDBANANA_SECRET_KEY")
# Shorter values would redact ordinary words.
MIN_SECRET_LENGTH = 8


def redact_optional(text: str | None) -> str | None:
    """An error that may be absent (None or empty), redacted when it is there."""
    return redact(text) if text else text


def redact(text: str, extra_secrets: tuple[str, ...] = ()) -> str:
    """The text with every credential-shaped part and every known secret replaced."""
    for secret in (*extra_secrets, *(os.environ.get(name, "") for name in SECRET_VARIABLES)):
        if len(secret) >= MIN_SECRET_LENGTH:
            text = text.replace(secret, REDACTED)
    return _SHAPES.sub(REDACTED, text)
