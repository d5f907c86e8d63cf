"""A lending library's store for the state benchmarks: books, members and loans, grown to a
given number of book rows (bench/library/: its schema, tools and spec).

The issue's reviewers measured a held-out lending-library store of 1,000,000 book rows; this
is a store of that shape, built here. Each case lends a book: find it by ISBN, lend it to a
member, look the member up (`goal_state: "plan"`). 40% of the agents make the plan's calls,
40% reach the goal another way (the member first, the book's id given), 20% leave another
state (another book lent, or the book lent and given back).
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent / "library"
MEMBERS_PER_BOOK = 0.01
LOANS_PER_BOOK = 0.05
_YEAR_SPAN = (1850, 2026)
_WORDS = [
    "river",
    "night",
    "garden",
    "stone",
    "winter",
    "letter",
    "silent",
    "house",
    "glass",
    "road",
    "north",
    "empire",
    "salt",
    "orchard",
    "lantern",
    "harbour",
    "paper",
    "clock",
    "iron",
    "mirror",
]


def make_database(folder: Path, rows: int) -> Path:
    """The library as a SQLite file with `rows` books (a hundredth as many members, at least
    3; a twentieth as many loans, every other one returned)."""
    path = folder / f"library-{rows}.db"
    db = sqlite3.connect(path)
    db.executescript((FOLDER / "schema.sql").read_text(encoding="utf-8"))
    rng = random.Random(11)
    members = max(3, int(rows * MEMBERS_PER_BOOK))

    def book(i: int) -> tuple[Any, ...]:
        title = " ".join(rng.choice(_WORDS) for _ in range(3)).title()
        copies = rng.randint(1, 4)
        return (
            f"book-{i}",
            title,
            f"Author {i % 9973}",
            f"978{i:010d}",
            rng.randint(*_YEAR_SPAN),
            copies,
            copies,
        )

    db.executemany("INSERT INTO books VALUES (?, ?, ?, ?, ?, ?, ?)", (book(i) for i in range(rows)))
    db.executemany(
        "INSERT INTO members VALUES (?, ?, ?, 5)",
        ((f"member-{i}", f"Member {i}", f"m{i}@example.org") for i in range(members)),
    )
    loans = []
    for i in range(int(rows * LOANS_PER_BOOK)):
        returned = "2025-12-20T10:00:00+00:00" if i % 2 else None
        loans.append((f"book-{rng.randrange(rows)}", f"member-{rng.randrange(members)}", returned))
    db.executemany(
        "INSERT INTO loans (book_id, member_id, borrowed_at, due_at, returned_at) "
        "VALUES (?, ?, '2025-12-01T10:00:00+00:00', '2025-12-22', ?)",
        loans,
    )
    db.execute(
        "UPDATE books SET available = max(0, copies - (SELECT count(*) FROM loans "
        "WHERE loans.book_id = books.book_id AND returned_at IS NULL)) "
        "WHERE book_id IN (SELECT book_id FROM loans WHERE returned_at IS NULL)"
    )
    db.commit()
    db.close()
    return path


def case_lines(n: int, database: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """`n` (case, output) lines, as a cases file and an outputs file hold them."""
    db = sqlite3.connect(database)
    try:
        books = db.execute(
            "SELECT book_id, isbn FROM books WHERE available >= 2 ORDER BY rowid LIMIT 2000"
        ).fetchall()
        members = [
            m
            for (m,) in db.execute(
                "SELECT member_id FROM members WHERE member_id NOT IN "
                "(SELECT member_id FROM loans WHERE returned_at IS NULL) ORDER BY rowid LIMIT 2000"
            )
        ]
        (next_loan,) = db.execute("SELECT coalesce(max(loan_id), 0) + 1 FROM loans").fetchone()
    finally:
        db.close()
    lines = []
    for i in range(n):
        rng = random.Random(i)
        (book, isbn), other = rng.choice(books), rng.choice(books)[0]
        member = rng.choice(members)
        plan: list[dict[str, Any]] = [
            {"id": "look", "name": "find_book", "args": {"isbn": isbn}},
            {
                "name": "borrow_book",
                "args": {"member_id": member, "book_id": {"$ref": "look#/book_id"}},
            },
            {"name": "get_member", "args": {"member_id": member}},
        ]
        look: dict[str, Any] = {"name": "find_book", "args": {"isbn": isbn}}
        lend: dict[str, Any] = {
            "name": "borrow_book",
            "args": {"member_id": member, "book_id": book},
        }
        who: dict[str, Any] = {"name": "get_member", "args": {"member_id": member}}
        produced = [look, lend, who]
        if i % 10 == 1:
            produced = [look, {**lend, "args": {**lend["args"], "book_id": other}}, who]
        elif i % 10 == 2:
            produced = [look, lend, {"name": "return_book", "args": {"loan_id": next_loan}}]
        elif i % 2 == 1:
            produced = [who, lend, look]
        case = {"id": f"case-{i}", "prompt": "", "tags": [], "plans": [plan], "goal_state": "plan"}
        lines.append((case, {"id": case["id"], "calls": produced}))
    return lines
