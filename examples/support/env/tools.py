"""The support desk's tools as the store runs them, for replaying an agent's calls.

Each function takes the database connection and the call's arguments and returns the tool's
JSON result; one that raises is a failed call. A tool that needs the clock declares `ctx`:
toolscore passes a fixed clock (and random source) per case, so replay is deterministic.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolscore.state import ToolContext

_ORDER = ("order_id", "customer_id", "total", "refunded", "currency", "status")
_SELECT = f"SELECT {', '.join(_ORDER)} FROM orders"


def get_order(db: sqlite3.Connection, order_id: str) -> dict[str, Any]:
    """One order, with what has been refunded on it so far."""
    row = db.execute(f"{_SELECT} WHERE order_id = ?", (order_id,)).fetchone()
    if row is None:
        raise LookupError(f"no order {order_id!r}")
    return dict(zip(_ORDER, row, strict=True))


def list_orders(db: sqlite3.Connection, customer_id: str) -> list[dict[str, Any]]:
    """A customer's orders, oldest first."""
    rows = db.execute(f"{_SELECT} WHERE customer_id = ? ORDER BY rowid", (customer_id,))
    return [dict(zip(_ORDER, row, strict=True)) for row in rows]


def refund(
    db: sqlite3.Connection,
    order_id: str,
    amount: float,
    unit: str = "EUR",
    note: str | None = None,
    *,
    ctx: ToolContext,
) -> dict[str, Any]:
    """Pay back part of an order; more than what remains to refund is refused."""
    order = get_order(db, order_id)
    if unit != order["currency"]:
        raise ValueError(f"order {order_id!r} was paid in {order['currency']}, not {unit}")
    remaining = round(order["total"] - order["refunded"], 2)
    if not 0 < amount <= remaining + 0.005:
        raise ValueError(f"cannot refund {amount} {unit}: {remaining} left on {order_id!r}")
    return {**_pay_back(db, order_id, amount, unit, ctx), "note": note}


def cancel_order(
    db: sqlite3.Connection, order_id: str, reason: str, *, ctx: ToolContext
) -> dict[str, Any]:
    """Cancel an order that has not been delivered, refunding whatever remains on it."""
    order = get_order(db, order_id)
    if order["status"] in ("delivered", "cancelled"):
        raise ValueError(f"order {order_id!r} is {order['status']}: it cannot be cancelled")
    db.execute("UPDATE orders SET status = 'cancelled' WHERE order_id = ?", (order_id,))
    remaining = round(order["total"] - order["refunded"], 2)
    paid = _pay_back(db, order_id, remaining, order["currency"], ctx) if remaining > 0 else None
    return {"order_id": order_id, "status": "cancelled", "reason": reason, "refund": paid}


def _pay_back(
    db: sqlite3.Connection, order_id: str, amount: float, unit: str, ctx: ToolContext
) -> dict[str, Any]:
    cursor = db.execute(
        "INSERT INTO refunds (order_id, amount, unit, created_at) VALUES (?, ?, ?, ?)",
        (order_id, amount, unit, ctx.now.isoformat()),
    )
    db.execute("UPDATE orders SET refunded = refunded + ? WHERE order_id = ?", (amount, order_id))
    return {"refund_id": cursor.lastrowid, "order_id": order_id, "amount": amount, "unit": unit}
