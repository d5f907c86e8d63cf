"""A tiny retail store in the tau-bench style: tools change the data in place and return
their errors as "Error: ..." strings (or raise, for the tests of raised errors)."""

from typing import Any


def get_order(state: Any, order_id: Any) -> Any:
    order = state["orders"].get(order_id)
    return order if order is not None else "Error: order not found"


def cancel_order(state: Any, order_id: Any, *, ctx: Any) -> Any:
    order = state["orders"].get(order_id)
    if order is None:
        return "Error: order not found"
    if order["status"] != "pending":
        return "Error: non-pending order cannot be cancelled"
    order["status"] = "cancelled"
    order["updated_at"] = ctx.now.date().isoformat()
    return order


def touch(state: Any, order_id: Any, when: Any) -> Any:
    state["orders"][order_id]["updated_at"] = when
    return "ok"


def set_price(state: Any, order_id: Any, item: Any, price: Any) -> Any:
    state["orders"][order_id]["items"][item]["price"] = price
    return "ok"


def add_item(state: Any, order_id: Any, item_id: Any, price: Any) -> Any:
    state["orders"][order_id]["items"].append({"id": item_id, "price": price})
    return "ok"


def remove_last_item(state: Any, order_id: Any) -> Any:
    state["orders"][order_id]["items"].pop()
    return "ok"


def refund(state: Any, user_id: Any, amount: Any) -> Any:
    """Credits first, checks after: a refund over 50 raises with the credit already made."""
    state["users"][user_id]["balance"] += amount
    if amount > 50:
        raise ValueError(f"refund of {amount} is over the limit")
    return state["users"][user_id]["balance"]


def charge(state: Any, user_id: Any, amount: Any) -> Any:
    """Debits first, checks after, and returns the error (as tau-bench's tools do)."""
    user = state["users"][user_id]
    user["balance"] -= amount
    if user["balance"] < 0:
        return "Error: insufficient balance"
    return user["balance"]


def flag(state: Any, user_id: Any, note: Any) -> Any:
    """Adds a note; a note starting with "!" comes back as an error object."""
    state["users"][user_id]["notes"].append(note)
    return {"error": "flagged"} if note.startswith("!") else {"ok": True}


def set_setting(state: Any, key: Any, value: Any) -> Any:
    state["settings"][key] = value
    return "ok"


def transfer_to_human_agents(state: Any, summary: Any) -> Any:
    return "Transfer successful"


def loop_forever(state: Any) -> Any:
    while True:
        state["settings"]["spin"] = state["settings"].get("spin", 0) + 1


def interrupt(state: Any) -> Any:
    raise KeyboardInterrupt


def nest(state: Any, depth: Any) -> Any:
    """Nests `depth` objects under /settings/deep (a state no recursion could walk)."""
    node = state["settings"]
    for _ in range(depth):
        node["deep"] = {}
        node = node["deep"]
    node["leaf"] = depth
    return "ok"


def is_error(result: Any) -> Any:
    """The `error_predicate` of the tests: a result object with an "error" key."""
    return isinstance(result, dict) and "error" in result
