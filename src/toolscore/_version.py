"""The package version, in a module of its own so that modules inside the package (and the
build's metadata) read it without importing the public facade."""

__version__ = "0.1.0"
