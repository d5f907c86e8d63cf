"""`python -m toolscore.schemas`: write the package's schema files anew from the loaders'
tables (after a key, kind or option is added to one; a test fails until they are)."""

from pathlib import Path

from toolscore.schemas.generate import write_shipped

for path in write_shipped(Path(__file__).parent):
    print(f"wrote {path}")
