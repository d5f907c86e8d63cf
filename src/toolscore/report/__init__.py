"""Renderers of scoring results: terminal (rich) and report JSON."""
