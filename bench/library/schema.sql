-- The lending library's store (bench/library_store.py fills it): its books, its members,
-- and the loans of books to members. A benchmark store, grown to a million book rows.

CREATE TABLE books (
    book_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    author TEXT NOT NULL,
    isbn TEXT NOT NULL UNIQUE,
    year INTEGER NOT NULL,
    copies INTEGER NOT NULL CHECK (copies >= 0),
    available INTEGER NOT NULL CHECK (available BETWEEN 0 AND copies)
);

CREATE TABLE members (
    member_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    max_loans INTEGER NOT NULL DEFAULT 5
);

CREATE TABLE loans (
    loan_id INTEGER PRIMARY KEY,
    book_id TEXT NOT NULL REFERENCES books (book_id),
    member_id TEXT NOT NULL REFERENCES members (member_id),
    borrowed_at TEXT NOT NULL,
    due_at TEXT NOT NULL,
    returned_at TEXT
);

CREATE INDEX loans_by_member ON loans (member_id, returned_at);
CREATE INDEX loans_by_book ON loans (book_id, returned_at);
