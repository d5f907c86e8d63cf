"""Command groups of the `toolscore` command line, one module each."""
