"""Shared fixtures of the tests of `toolscore.report`."""
