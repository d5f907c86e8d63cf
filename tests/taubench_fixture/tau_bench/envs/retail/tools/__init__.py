from .add_gift_card_credit import AddGiftCardCredit
from .cancel_pending_order import CancelPendingOrder
from .get_order_details import GetOrderDetails
from .set_item_quantity import SetItemQuantity
from .think import Think
from .transfer_to_human_agents import TransferToHumanAgents

ALL_TOOLS = [
    GetOrderDetails,
    CancelPendingOrder,
    SetItemQuantity,
    AddGiftCardCredit,
    TransferToHumanAgents,
    Think,
]
