"""The `toolscore` command line: one module per command group, each parsing options, calling
the library and printing; `main` is the console script's entry point."""

from toolscore.cli.app import cli, main

__all__ = ["cli", "main"]
