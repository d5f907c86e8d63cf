import json
import os
from typing import Any

FOLDER_PATH = os.path.dirname(__file__)


def load_data() -> dict[str, Any]:
    with open(os.path.join(FOLDER_PATH, "orders.json")) as f:
        orders = json.load(f)
    with open(os.path.join(FOLDER_PATH, "users.json")) as f:
        users = json.load(f)
    return {"orders": orders, "users": users}
