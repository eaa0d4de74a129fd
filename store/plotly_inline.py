"""Plotly.js, inlined: the report's charts are drawn by the plotly.js bundle that the
``plotly`` PyPI package ships (``plotly/package_data/plotly.min.js``), written once into
the page so that it opens offline (no CDN, no network). Figures are plain dicts in
plotly.js's JSON form (``data``, ``layout``), so only the bundle is needed, not the
Python API.

Everything that goes into a ``<script>`` element is JSON with ``<``, ``>`` and ``&``
written as ``\\u`` escapes, so no text from the store can end the script element.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

# the charts' shared look: no Plotly logo or link, resized with the page, zoomable
# (drag to zoom, double-click to reset), no toolbar over the figures
CONFIG = {"displaylogo": False, "displayModeBar": False, "responsive": True, "showLink": False,
          "showSendToCloud": False}  # fmt: skip
FONT = {"family": "system-ui, sans-serif", "size": 12}


@cache
def plotly_js() -> str:
    """The plotly.js bundle of the installed ``plotly`` package."""
    return (resources.files("plotly") / "package_data" / "plotly.min.js").read_text("utf-8")


def script_json(value: Any) -> str:
    """`value` as JSON that is safe inside a ``<script>`` element."""
    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                       ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):  # fmt: skip
        text = text.replace(char, code)
    return text


def library_tag() -> str:
    """The ``<script>`` element holding plotly.js (once per page, in the head)."""
    return f"<script>{plotly_js()}</script>"


def figure_tag(element_id: str, figure: dict[str, Any], height: int, css: str = "chart") -> str:
    """A ``<div>`` and the script drawing `figure` (``data``, ``layout``) into it."""
    layout = {"font": FONT, "height": height, "margin": {"l": 60, "r": 20, "t": 40, "b": 45},
              **figure.get("layout", {})}  # fmt: skip
    call = (
        f"Plotly.newPlot({script_json(element_id)},{script_json(figure.get('data', []))},"
        f"{script_json(layout)},{script_json(CONFIG)});"
    )
    return f"<div id='{element_id}' class='{css}'></div><script>{call}</script>"
