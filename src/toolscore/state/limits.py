"""The time limits of replayed tool code and SQL, as the state package has always named them:
they live in `toolscore.limits`, a base module that the regex rubric check shares without
importing the state package."""

from toolscore.limits import (
    PROGRESS_STEPS,
    TICK,
    CallTimeout,
    alarms_in_force,
    alarms_installed,
    exit_call,
    time_limit,
    watch,
)

__all__ = [
    "PROGRESS_STEPS",
    "TICK",
    "CallTimeout",
    "alarms_in_force",
    "alarms_installed",
    "exit_call",
    "time_limit",
    "watch",
]
