"""Shared fixtures of the tests of `toolscore.html_report`."""
