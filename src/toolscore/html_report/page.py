"""One self-contained HTML page: a Jinja2 template with its CSS, script and data inline.

The page loads nothing: a Content-Security-Policy allows only the one stylesheet and the one
script it carries (by their sha256), so that no text from a run can load or run anything.
Templates are autoescaped; data for the script goes in `<script type="application/json">`
with `<`, `>` and `&` written as JSON escapes, so no string can close the element.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import orjson
from markupsafe import Markup

from toolscore.errors import InputError
from toolscore.files import write_output
from toolscore.stats import intervals as stats

_PACKAGE = "toolscore.html_report"


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(_PACKAGE, "templates"),
        autoescape=True,
        undefined=jinja2.ChainableUndefined,  # an older report lacks some header keys
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=percent, pts=points, ci=interval, num=number, measure=measure, span=span)
    return env


def measure(value: float | None, unit: str) -> str:
    """A calibration number in its unit: a share as a percentage, a kappa with two decimals,
    a count of cases with one."""
    if value is None:
        return "undefined" if unit == "kappa" else "\u2013"
    if unit == "share":
        return percent(value)
    return f"{value:.2f}" if unit == "kappa" else f"{value:,.1f}"


def span(bounds: Any, unit: str) -> str:
    """A 95% interval in the unit of its number (`measure`), or a dash when there is none."""
    if not bounds:
        return "\u2013"
    if unit == "share":
        return interval(bounds)
    return f"{measure(bounds[0], unit)} \u2013 {measure(bounds[1], unit)}"


def percent(value: float | None) -> str:
    """A proportion as a percentage with one decimal, or a dash when unmeasured
    (`stats.percent`: the digits the terminal writes for the same number)."""
    return stats.percent(value, dash="\u2013")


def points(value: float | None) -> str:
    """A difference of proportions in signed percentage points, or a dash (`stats.points`)."""
    return stats.points(value, dash="\u2013")


def interval(bounds: Any) -> str:
    """A 95% interval as two percentages, or a dash when there is none: one decimal, or two
    where one would blur the bounds (`stats.interval_percents`, as the terminal writes it)."""
    if not bounds:
        return "\u2013"
    return " \u2013 ".join(stats.interval_percents(bounds))


def number(value: Any) -> str:
    """A number as JSON writes it (`null` for None), for a `data-` attribute a test reads."""
    return orjson.dumps(value).decode()


def _static(name: str) -> str:
    return (resources.files(_PACKAGE) / "static" / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def script_json(value: Any) -> Markup:
    """`value` as JSON that is safe inside a `<script type="application/json">` element."""
    return Markup(json_bytes(value).decode())


def json_bytes(value: Any) -> bytes:
    """`value` as JSON bytes with `<`, `>` and `&` written as `\\u003c`, `\\u003e`, `\\u0026`."""
    raw = orjson.dumps(value)
    return raw.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


def render(template: str, **context: Any) -> str:
    """The page `template` renders with `context`, its CSS and script inline."""
    css, script = _static("report.css"), _static("report.js")
    policy = (
        "default-src 'none'; "
        f"style-src '{_sha256(css)}'; "
        f"script-src '{_sha256(script)}'; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    return (
        _environment()
        .get_template(template)
        .render(
            css=Markup(css),
            script=Markup(script),
            policy=policy,
            **context,
        )
    )


def write_page(target: str, html: str) -> None:
    """Write the page to `target` whole or not at all; a disk error is one InputError line."""
    if Path(target).is_dir():
        raise InputError(target, "is a directory, not an HTML file")
    write_output(target, html)
