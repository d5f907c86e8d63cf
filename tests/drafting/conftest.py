"""Shared fixtures of the tests of `toolscore.drafting` (`spec init`): the sources and
their golden drafts are in tests/draft_sources.py, the fixture generator in
tests/make_definition_fixtures.py."""
