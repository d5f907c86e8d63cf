"""Shared fixtures of the tests of `toolscore.audit`."""
