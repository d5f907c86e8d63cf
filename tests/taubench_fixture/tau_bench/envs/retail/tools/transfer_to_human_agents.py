from typing import Any, Dict

from tau_bench.envs.tool import Tool


class TransferToHumanAgents(Tool):
    @staticmethod
    def invoke(data: Dict[str, Any], summary: str) -> str:
        return "Transfer successful"

    @staticmethod
    def get_info() -> Dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": "transfer_to_human_agents",
                "description": "Transfer the user to a human agent, with a summary.",
                "parameters": {
                    "type": "object",
                    "properties": {"summary": {"type": "string", "description": "The issue."}},
                    "required": ["summary"],
                },
            },
        }
