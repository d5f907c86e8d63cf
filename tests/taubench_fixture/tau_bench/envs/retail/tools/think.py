from typing import Any, Dict

from tau_bench.envs.tool import Tool


class Think(Tool):
    @staticmethod
    def invoke(data: Dict[str, Any], thought: str) -> str:
        return ""

    @staticmethod
    def get_info() -> Dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": "think",
                "description": "Think about something.",
                "parameters": {
                    "type": "object",
                    "properties": {"thought": {"type": "string", "description": "A thought."}},
                    "required": ["thought"],
                },
            },
        }
