"""Python functions for `spec init --python` tests: every kind of type hint it reads, with
`from __future__ import annotations` (hints are strings, read with `ast`), a name only a
type checker imports, and a pydantic model."""

from __future__ import annotations

import datetime
import enum
from typing import TYPE_CHECKING, Annotated, Literal, Optional

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from toolscore.state import ToolContext


class Cabin(enum.Enum):
    """A cabin class."""

    ECONOMY = "economy"
    BUSINESS = "business"


class Passenger(BaseModel):
    """One passenger."""

    first_name: str
    last_name: str
    dob: datetime.date = Field(description="Date of birth.")


def book(
    db: object,
    user_id: str,
    cabin: Cabin,
    passengers: list[Passenger],
    when: datetime.datetime,
    seats: int = 1,
    insurance: Literal["yes", "no"] = "no",
    price: float | None = None,
    tags: tuple[str, ...] = (),
    note: Annotated[str, "A note for the crew."] = "",
    city: Optional[str] = None,  # noqa: UP045 - the old spelling is read too
    *,
    ctx: ToolContext,
) -> dict[str, object]:
    """Book a flight for the passengers.

    Args:
        user_id: The user who books.
        city: The city the user flies from,
            as they wrote it.
    """
    raise NotImplementedError


def search(
    query: str, limit: int = Field(default=10, description="At most this many.")
) -> list[str]:
    """Search the timetable."""
    raise NotImplementedError
