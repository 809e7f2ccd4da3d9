"""The leaderboard and what is shown beside it: ranking, pairs, notes, tables, the JSON document."""
