"""Read models of the stored log and the cohort reports built from them.

- ``log_tables``, ``catalog``: read-only queries returning polars frames (the dashboard and the
  reports read through these; ``columnar`` makes them fast on millions of rows);
- ``bundle.build_report``: ``arena report``'s self-contained folder (HTML, Markdown, tables,
  manifest) and zip; ``redact`` keeps secrets out of both.
"""

from arena.reports.bundle import Report, build_report
from arena.reports.content import ReportError
from arena.reports.manifest import REPORT_FORMAT_VERSION

__all__ = ["REPORT_FORMAT_VERSION", "Report", "ReportError", "build_report"]
