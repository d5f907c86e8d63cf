"""Shared fixtures of the tests of `toolscore.tau2`."""
