"""Glue for the tools teams already evaluate with (pytest, Inspect, LangSmith, Langfuse).

Each integration lives in its own module and imports its library only there, so that
importing this package (or `toolscore`) pulls in none of them.
"""

__all__ = ["evaluators", "inspect", "pytest_plugin"]
