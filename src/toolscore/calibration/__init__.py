"""Calibration: sample the cases where scorers disagree, let a person label them, and measure
each scorer against the person (where the person and the rule scorer disagree, that is a
scorer bug)."""

from toolscore.calibration.block import report_block

__all__ = ["report_block"]
