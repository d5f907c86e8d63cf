"""The one-file HTML report of a run and of a comparison of two runs (Jinja2, inline SVG).

It sits above `toolscore.report` (the terminal, JSON, JUnit and OpenTelemetry writers) and
`toolscore.calibration` (whose tables it shows), and is imported only with `--html` or
`toolscore report`.
"""

__all__ = [
    "build",
    "charts",
    "compare_html",
    "embed",
    "html",
    "page",
    "sink",
    "sources",
]
