"""Values of ``decision.error_kind`` that the engine writes and scoring reads.

``INVALID_ACTIONS``: the ledger refused a decision's actions (status ``rejected``; none of its legs
executed). Its stated probabilities passed their own check, so they still count as its forecasts.
"""

INVALID_ACTIONS = "invalid_actions"
