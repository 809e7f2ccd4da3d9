"""Replay mode: a simulated clock stepped through a recorded dataset, one run per cohort."""
