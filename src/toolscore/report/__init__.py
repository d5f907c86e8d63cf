"""What a scoring run writes: the terminal summary (`terminal`, with `absent`, `lenient` and
`printable`), the report JSON (`json_report`), JUnit XML (`junit`), OpenTelemetry events
(`otel_events`), and the protocol every output of a run implements (`sink`). Nothing is
imported here: `score` loads each writer only when its option asks for it."""

__all__ = [
    "absent",
    "json_report",
    "junit",
    "lenient",
    "otel_events",
    "printable",
    "sink",
    "terminal",
]
