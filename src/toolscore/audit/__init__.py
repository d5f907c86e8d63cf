"""Auditing the scorer itself: how much of a spec the cases exercise (`coverage`), which
known-bad answers a spec forgives and which harmless ones it fails (`planted`, run by
`toolscore audit`), rule changes the evidence points to (`suggest`), and which spec change
flipped a stored verdict (`blame`)."""

__all__: list[str] = []
