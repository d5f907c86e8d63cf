"""`python -m toolscore`: the same command line as the `toolscore` script."""

from toolscore.cli.app import main

if __name__ == "__main__":
    main()
