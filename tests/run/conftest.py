"""Shared fixtures of the tests of `toolscore.run` (a scoring run called as a library)."""
