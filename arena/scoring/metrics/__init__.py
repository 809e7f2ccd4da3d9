"""The leaderboard's metrics, each declared once: inputs, rule, label and direction."""
