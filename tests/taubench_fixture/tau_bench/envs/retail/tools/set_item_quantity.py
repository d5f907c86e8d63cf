from typing import Any, Dict

from tau_bench.envs.tool import Tool


class SetItemQuantity(Tool):
    @staticmethod
    def invoke(data: Dict[str, Any], order_id: str, item_ids: list, quantity: int) -> str:
        order = data["orders"].get(order_id)
        if order is None:
            return "Error: order not found"
        for item in order["items"]:
            if item["item_id"] in item_ids:
                item["quantity"] = quantity  # stored as sent: 2.0 stays a float
        return "Quantity set"

    @staticmethod
    def get_info() -> Dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": "set_item_quantity",
                "description": "Set the quantity of items of a pending order.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "order_id": {"type": "string", "description": "The order id."},
                        "item_ids": {"type": "array", "items": {"type": "string"}, "description": "The items."},
                        "quantity": {"type": "integer", "description": "How many."},
                    },
                    "required": ["order_id", "item_ids", "quantity"],
                },
            },
        }
