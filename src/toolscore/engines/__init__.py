"""Where scoring runs: the engine-neutral batch interface (`batch`), worker processes on this
machine (`local`), joined records in partitions for distributed engines (`partitions`) and a
Ray cluster (`ray`). Nothing is imported here: each engine is imported only when it runs, so
that Ray and pyarrow stay optional."""

import warnings

__all__ = ["batch", "local", "partitions", "ray"]


def warn_moved(old: str, new: str) -> None:
    """Warn, once per import, that module `old` moved to `new` (the old name re-exports the
    new module for one release)."""
    warnings.warn(
        f"{old} moved to {new}; the old name goes in the next release",
        DeprecationWarning,
        stacklevel=3,
    )
