"""A toy retail toolkit (written for the fixture)."""

from typing import List, Optional

from tau2.environment.toolkit import ToolKitBase, ToolType, is_tool


class ToyRetailTools(ToolKitBase):
    """The toy domain's tools."""

    def _order(self, order_id: str) -> dict:
        if order_id not in self.db.data["orders"]:
            raise ValueError("Order not found")
        return self.db.data["orders"][order_id]

    @is_tool(ToolType.READ)
    def get_order_details(self, order_id: str) -> dict:
        """Get an order.

        Args:
            order_id: The order id, such as '#W1'.
        """
        return self._order(order_id)

    @is_tool(ToolType.WRITE)
    def cancel_pending_order(self, order_id: str, reason: str) -> dict:
        """Cancel a pending
        order.

        Args:
            order_id: The order id.
            reason: Why.
        """
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be cancelled")
        order["status"] = "cancelled"
        order["reason"] = reason
        return order

    @is_tool(ToolType.WRITE)
    def set_quantity(self, order_id: str, quantity: float) -> dict:
        """Set an order's quantity."""
        order = self._order(order_id)
        order["quantity"] = quantity
        return order

    @is_tool(tool_type=ToolType.WRITE)
    def add_credit(self, user_id: str, amount: int) -> str:
        """Add credit, then fail on the audit (the change stays)."""
        self.db.data["users"][user_id]["credit"] += amount
        raise ValueError("audit failed")

    @is_tool(ToolType.WRITE)
    def tag_order(self, order_id: str, labels: List[str], note: Optional[str] = None, *, urgent: "bool | None" = None) -> str:
        """Tag an order."""
        self._order(order_id)["labels"] = labels
        return "ok"

    @is_tool(ToolType.WRITE, mutates_state=False)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent."""
        return "Transfer successful"

    def helper_not_a_tool(self, order_id: str) -> None:
        """Not decorated: not a tool."""
