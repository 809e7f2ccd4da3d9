"""Scoring rules over the frames: row-wise scores and per-agent aggregates of bets and money."""
