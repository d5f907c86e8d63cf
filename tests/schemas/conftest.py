"""Shared fixtures of the tests of `toolscore.schemas`."""
