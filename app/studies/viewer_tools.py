"""Which image tools a study's readers get, and what they did with them on each read.

Flicker, swipe and the difference map point straight at an edit, so a blinded study may
leave them out; window/level changes how a finding looks. Each read records the tools used
(how often, for how long), and the long answers CSV carries it, so an analysis can ask
whether tool use went with different verdicts.
"""

import json
import logging
from typing import Any

from app.errors import Forbidden, Invalid
from app.studies.models import Study

logger = logging.getLogger(__name__)

# The tools a study can give or withhold, with how the study form names them.
VIEWER_TOOLS = {
    "window": "Window/level, invert and presets",
    "flicker": "Flicker (swap original and edit in place)",
    "swipe": "Swipe (a slider reveals one over the other)",
    "difference": "Difference map |edit - original|",
}
# The tools that need the image's pair: a study that shows one image alone cannot give them.
PAIRED_TOOLS = ("flicker", "swipe", "difference")
MAX_USES = 100_000
MAX_MS = 24 * 3600 * 1000  # a day on one case is a tab left open, not a read


def tools_of(study: Study) -> frozenset[str]:
    return frozenset(t for t in json.loads(study.viewer_tools) if t in VIEWER_TOOLS)


def require_tool(study: Study, tool: str) -> None:
    """A withheld tool stays withheld: its image (the difference map) is not served either."""
    if tool not in tools_of(study):
        raise Forbidden(f"this study does not give its readers the {tool} tool")


def tools_json(tools: list[str] | tuple[str, ...], *, single_image: bool = False) -> str:
    """The tools as stored; ``single_image`` (a real-or-edited study) leaves out the tools
    that would show the pair."""
    unknown = sorted(set(tools) - set(VIEWER_TOOLS))
    if unknown:
        raise Invalid(f"unknown viewer tool(s) {', '.join(unknown)}; known: {', '.join(VIEWER_TOOLS)}",
                      field="viewer_tools")
    return json.dumps([t for t in VIEWER_TOOLS if t in tools
                       and not (single_image and t in PAIRED_TOOLS)])


def tool_use_json(raw: str | None, allowed: frozenset[str]) -> str | None:
    """The page's record of tool use on a read, checked: known tools, each with whole numbers
    of uses and milliseconds; anything else is refused, not guessed at. A known tool the
    study no longer gives (its setup changed while a draft was open) is left out, with a
    log line: the reader cannot fix a hidden field, and the study's tools are what count."""
    if raw is None or raw.strip() == "":
        return None
    try:
        given: Any = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nested too deep
        raise Invalid("the tool use record is not JSON", field="tool_use") from None
    if not isinstance(given, dict):
        raise Invalid("the tool use record must map tools to their use", field="tool_use")
    kept: dict[str, dict[str, int]] = {}
    for tool, use in given.items():
        if tool not in VIEWER_TOOLS:
            raise Invalid(f"{tool!r} is not a viewer tool", field="tool_use")
        if (not isinstance(use, dict) or set(use) != {"uses", "ms"}
                or not all(type(v) is int for v in use.values())
                or not 0 <= use["uses"] <= MAX_USES or not 0 <= use["ms"] <= MAX_MS):
            raise Invalid(f"the use of {tool} must be whole uses and milliseconds", field="tool_use")
        if tool not in allowed:
            logger.info("tool use of %s left out: the study does not give it", tool)
        elif use["uses"]:
            kept[tool] = {"uses": use["uses"], "ms": use["ms"]}
    return json.dumps(kept, sort_keys=True)
