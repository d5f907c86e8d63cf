"""A toy Environment with the methods toolscore's tau2.checkout calls (written for the
fixture)."""

import copy
import json
from pathlib import Path

from tau2.domains.retail.tools import ToyRetailTools

DB_PATH = Path(__file__).parents[4] / "data" / "tau2" / "domains" / "retail" / "db.json"


class ToyDb:
    """Its collections are attributes, as a pydantic model's fields are (checkout.restore
    puts them back by name)."""

    def __init__(self, data):
        self.orders = data["orders"]
        self.users = data["users"]

    @property
    def data(self):
        return {"orders": self.orders, "users": self.users}

    def model_dump(self, mode="python"):
        return copy.deepcopy(self.data)


class Environment:
    def __init__(self, tools):
        self.tools = tools
        self.user_tools = None

    def make_tool_call(self, tool_name, requestor="assistant", **kwargs):
        method = getattr(self.tools, tool_name, None)
        if not getattr(method, "is_tool", False):
            raise ValueError(f"Tool '{tool_name}' not found.")
        return method(**kwargs)

    def sync_tools(self):
        pass

    @classmethod
    def to_json_str(cls, resp):
        return resp if isinstance(resp, str) else json.dumps(resp)


def get_environment():
    return Environment(ToyRetailTools(ToyDb(json.loads(DB_PATH.read_text()))))
