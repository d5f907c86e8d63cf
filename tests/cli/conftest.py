"""Shared fixtures of the tests of `toolscore.cli` (the command line)."""
