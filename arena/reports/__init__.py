"""Read models of the stored log and the cohort reports built from them.

- ``log_tables``, ``catalog``: read-only queries returning polars frames (the dashboard and the
  reports read through these; ``columnar`` makes them fast on millions of rows);
- ``state``: whether a database holds a current arena schema, asked first by every reader;
- ``bundle.build_report``: ``arena report``'s self-contained folder (HTML, Markdown, tables,
  manifest) and zip; ``redact`` keeps secrets out of both.

The package itself imports nothing: building a report pulls in plotly and the figures, which a
command that only checks a database's state (``arena leaderboard``) must not pay for at start-up.
"""
