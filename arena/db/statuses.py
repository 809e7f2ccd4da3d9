"""Stored status values that readers test for, apart from the models so light readers need no ORM."""

from __future__ import annotations

FINISHED_ROUND_STATUSES = ("done", "failed", "missed", "empty")
"""A round in one of these is over: ``missed`` when no agent was asked (a live round found too
late), ``empty`` when no agent was asked because it offered nothing to trade."""
