from typing import Any, Dict

from tau_bench.envs.tool import Tool


class AddGiftCardCredit(Tool):
    @staticmethod
    def invoke(data: Dict[str, Any], user_id: str, payment_method_id: str, amount: float) -> str:
        card = data["users"][user_id]["payment_methods"][payment_method_id]
        card["balance"] = round(card["balance"] + amount, 2)
        if amount > 100:  # checked after the credit, which stays (tau-bench undoes nothing)
            raise ValueError("credit over 100 needs approval")
        return str(card["balance"])

    @staticmethod
    def get_info() -> Dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": "add_gift_card_credit",
                "description": "Credit a gift card.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "user_id": {"type": "string", "description": "The user id."},
                        "payment_method_id": {"type": "string", "description": "The gift card."},
                        "amount": {"type": "number", "description": "The credit."},
                    },
                    "required": ["user_id", "payment_method_id", "amount"],
                },
            },
        }
