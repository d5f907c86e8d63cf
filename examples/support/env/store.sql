-- The support desk's store: customers, their orders, and the refunds paid on them.
-- toolscore builds it in memory once and replays each case on a private copy.

CREATE TABLE customers (
    customer_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL
);

CREATE TABLE orders (
    order_id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers (customer_id),
    total REAL NOT NULL,
    refunded REAL NOT NULL DEFAULT 0,
    currency TEXT NOT NULL DEFAULT 'EUR',
    status TEXT NOT NULL CHECK (status IN ('open', 'shipped', 'delivered', 'cancelled'))
);

CREATE TABLE refunds (
    refund_id INTEGER PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (order_id),
    amount REAL NOT NULL CHECK (amount > 0),
    unit TEXT NOT NULL,
    created_at TEXT NOT NULL
);

INSERT INTO customers VALUES
    ('cust-1', 'Ada Lovelace', 'ada@example.com'),
    ('cust-2', 'Grace Hopper', 'grace@example.com'),
    ('cust-3', 'Alan Turing', 'alan@example.com');

INSERT INTO orders (order_id, customer_id, total, refunded, status) VALUES
    ('order-12', 'cust-1', 35.00, 0, 'shipped'),
    ('order-13', 'cust-1', 18.40, 0, 'delivered'),
    ('order-31', 'cust-2', 42.00, 0, 'delivered'),
    ('order-41', 'cust-3', 45.00, 0, 'open'),
    ('order-77', 'cust-1', 60.00, 0, 'shipped'),
    ('order-90', 'cust-2', 60.00, 10.00, 'delivered');

INSERT INTO refunds (order_id, amount, unit, created_at) VALUES
    ('order-90', 10.00, 'EUR', '2026-10-02T09:30:00+00:00');
