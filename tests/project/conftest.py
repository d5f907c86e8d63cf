"""Shared fixtures of the tests of the project as a whole: the public API, the build, the docs
and the start-up budget."""
