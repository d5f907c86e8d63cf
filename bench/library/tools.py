"""The lending library's tools as its store runs them, for replaying an agent's calls.

Each function takes the database connection and the call's arguments and returns the tool's
JSON result; one that raises is a failed call. Lending and returning read the clock from
`ctx`, which toolscore fixes per case, so that replay is deterministic.
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolscore.state import ToolContext

_BOOK = ("book_id", "title", "author", "isbn", "year", "copies", "available")
_MEMBER = ("member_id", "name", "email", "max_loans")
LOAN_DAYS = 21


def find_book(db: sqlite3.Connection, isbn: str) -> dict[str, Any]:
    """The book with this ISBN, and how many of its copies are on the shelf."""
    row = db.execute(f"SELECT {', '.join(_BOOK)} FROM books WHERE isbn = ?", (isbn,)).fetchone()
    if row is None:
        raise LookupError(f"no book with ISBN {isbn!r}")
    return dict(zip(_BOOK, row, strict=True))


def get_member(db: sqlite3.Connection, member_id: str) -> dict[str, Any]:
    """A member, with the books they have on loan now."""
    row = db.execute(
        f"SELECT {', '.join(_MEMBER)} FROM members WHERE member_id = ?", (member_id,)
    ).fetchone()
    if row is None:
        raise LookupError(f"no member {member_id!r}")
    loans = db.execute(
        "SELECT loan_id, book_id, due_at FROM loans "
        "WHERE member_id = ? AND returned_at IS NULL ORDER BY loan_id",
        (member_id,),
    ).fetchall()
    on_loan = [{"loan_id": i, "book_id": b, "due_at": d} for i, b, d in loans]
    return {**dict(zip(_MEMBER, row, strict=True)), "on_loan": on_loan}


def borrow_book(
    db: sqlite3.Connection, member_id: str, book_id: str, *, ctx: ToolContext
) -> dict[str, Any]:
    """Lend a copy of a book to a member: refused when no copy is on the shelf, when the
    member has the book already, or has as many books as they may."""
    member = get_member(db, member_id)
    if len(member["on_loan"]) >= member["max_loans"]:
        raise ValueError(f"member {member_id!r} has {member['max_loans']} books already")
    if any(loan["book_id"] == book_id for loan in member["on_loan"]):
        raise ValueError(f"member {member_id!r} has {book_id!r} on loan already")
    row = db.execute("SELECT available FROM books WHERE book_id = ?", (book_id,)).fetchone()
    if row is None:
        raise LookupError(f"no book {book_id!r}")
    if row[0] < 1:
        raise ValueError(f"no copy of {book_id!r} is on the shelf")
    due = (ctx.now + timedelta(days=LOAN_DAYS)).date().isoformat()
    cursor = db.execute(
        "INSERT INTO loans (book_id, member_id, borrowed_at, due_at) VALUES (?, ?, ?, ?)",
        (book_id, member_id, ctx.now.isoformat(), due),
    )
    db.execute("UPDATE books SET available = available - 1 WHERE book_id = ?", (book_id,))
    return {"loan_id": cursor.lastrowid, "book_id": book_id, "member_id": member_id, "due_at": due}


def return_book(db: sqlite3.Connection, loan_id: int, *, ctx: ToolContext) -> dict[str, Any]:
    """Take a lent copy back: the loan ends and the copy is on the shelf again."""
    row = db.execute(
        "SELECT book_id, returned_at FROM loans WHERE loan_id = ?", (loan_id,)
    ).fetchone()
    if row is None:
        raise LookupError(f"no loan {loan_id!r}")
    if row[1] is not None:
        raise ValueError(f"loan {loan_id!r} ended on {row[1]}")
    db.execute("UPDATE loans SET returned_at = ? WHERE loan_id = ?", (ctx.now.isoformat(), loan_id))
    db.execute("UPDATE books SET available = available + 1 WHERE book_id = ?", (row[0],))
    return {"loan_id": loan_id, "book_id": row[0], "returned_at": ctx.now.isoformat()}
