"""Rubrics: free-text arguments scored apart from the call score (docs/formats.md).

The call scorer never compares a `text` argument; a rubric named on it scores the produced
text on its own scale, and its results are reported beside the call verdict, never in it.
"""
