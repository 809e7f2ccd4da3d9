"""Every chart of the dashboard and the reports: pure functions, polars frames in, ``go.Figure`` out.

Nothing here reads the database or Streamlit state, so each builder is unit-tested on small
frames and the HTML report draws exactly the charts the dashboard shows. Shared conventions:

- an agent keeps one colour everywhere (``agent_styles``): LLMs and plug-ins get distinct
  colours as solid lines, baseline bots colours of their own (colour-blind safe) as thinner
  dashed lines, each with its own dash, so references never look like contenders or like each other;
- money axes are in dollars with cents in hover labels; returns and probabilities say their unit;
- every figure has a title and axis titles, and an empty frame gives an empty, titled figure.

The package sits below both ``arena.reports`` and ``dashboard`` and imports neither, so the
dependency arrows run one way: reports and dashboard pages read their charts from here.
"""

from arena.figures.activity import decision_costs, equity_curves, pnl_bars, round_outcomes
from arena.figures.calibration import reliability_diagrams
from arena.figures.markets import market_history
from arena.figures.scores import leaderboard_intervals, stated_vs_implied
from arena.figures.style import BASELINE_COLOURS, PALETTE, AgentStyle, agent_styles

__all__ = [
    "BASELINE_COLOURS",
    "PALETTE",
    "AgentStyle",
    "agent_styles",
    "decision_costs",
    "equity_curves",
    "leaderboard_intervals",
    "market_history",
    "pnl_bars",
    "reliability_diagrams",
    "round_outcomes",
    "stated_vs_implied",
]
