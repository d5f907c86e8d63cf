from tau_bench.types import Action, Task

TASKS_TEST = [
    Task(
        annotator="0",
        user_id="ana_1",
        instruction="You are Ana. Cancel order #W1, you no longer need it.",
        actions=[
            Action(name="get_order_details", kwargs={"order_id": "#W1"}),
            Action(
                name="cancel_pending_order",
                kwargs={"order_id": "#W1", "reason": "no longer needed"},
            ),
        ],
        outputs=[],
    ),
    Task(
        annotator="0",
        user_id="bo_2",
        instruction="You are Bo. You want two desks in order #W3 and the desk's price.",
        actions=[
            Action(name="set_item_quantity", kwargs={"order_id": "#W3", "item_ids": ["300"], "quantity": 2}),
        ],
        outputs=["1093.34"],
    ),
    Task(
        annotator="0",
        user_id="bo_2",
        instruction="You are Bo. Cancel #W3; if you cannot, ask for a human.",
        actions=[
            Action(name="cancel_pending_order", kwargs={"order_id": "#W3", "reason": "no longer needed"}),
            Action(name="transfer_to_human_agents", kwargs={"summary": "wants to cancel a delivered order"}),
        ],
        outputs=[],
    ),
    Task(
        annotator="0",
        user_id="ana_1",
        instruction="You are Ana. Ask where the mug ships from (Lisbon).",
        actions=[],
        outputs=["Lisbon"],
    ),
]
