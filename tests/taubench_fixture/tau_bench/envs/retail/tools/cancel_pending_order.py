import json
from typing import Any, Dict

from tau_bench.envs.tool import Tool


class CancelPendingOrder(Tool):
    @staticmethod
    def invoke(data: Dict[str, Any], order_id: str, reason: str) -> str:
        orders = data["orders"]
        if order_id not in orders:
            return "Error: order not found"
        order = orders[order_id]
        if order["status"] != "pending":
            return "Error: non-pending order cannot be cancelled"
        if reason not in ["no longer needed", "ordered by mistake"]:
            return "Error: invalid reason"
        refunds = []
        for payment in order["payment_history"]:
            method = payment["payment_method_id"]
            refunds.append({"transaction_type": "refund", "amount": payment["amount"], "payment_method_id": method})
            if "gift_card" in method:
                card = data["users"][order["user_id"]]["payment_methods"][method]
                card["balance"] = round(card["balance"] + payment["amount"], 2)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return json.dumps(order)

    @staticmethod
    def get_info() -> Dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": "cancel_pending_order",
                "description": (
                    "Cancel a pending order. "
                    "The refund goes to a gift card at once."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "order_id": {"type": "string", "description": "The order id."},
                        "reason": {
                            "type": "string",
                            "enum": ["no longer needed", "ordered by mistake"],
                            "description": "Why the order is cancelled.",
                        },
                    },
                    "required": ["order_id", "reason"],
                },
            },
        }
