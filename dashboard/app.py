"""The dashboard's single entry: ``streamlit run dashboard/app.py`` (or ``arena dashboard``).

It sets the page up, draws the shared sidebar and hands over to the page chosen in the
navigation. Pages live in ``dashboard/app_pages/``, listed here explicitly. Not ``pages/``:
Streamlit also serves that folder the legacy way, so a deep link such as ``/cohort`` opened in
a new tab would run the page without this entry file (no sidebar, no page setup).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.widgets import sidebar

# A local SVG goes into the page as a data: URL. Without an icon, or with a Material one, browsers
# fetch it from Google; an emoji costs Streamlit's emoji catalogue on the first page.
FAVICON = Path(__file__).with_name("favicon.svg")
st.set_page_config(page_title="Bettor Arena", page_icon=FAVICON, layout="wide")

PAGES = [
    st.Page("app_pages/leaderboard.py", title="Leaderboard", icon=":material/leaderboard:", default=True),
    st.Page("app_pages/cohort.py", title="Cohort", icon=":material/groups:"),
    st.Page("app_pages/agent.py", title="Agent", icon=":material/smart_toy:"),
    st.Page("app_pages/markets.py", title="Markets", icon=":material/query_stats:"),
    st.Page("app_pages/calibration.py", title="Calibration", icon=":material/straighten:"),
    st.Page("app_pages/compare.py", title="Compare two agents", icon=":material/compare_arrows:"),
    st.Page("app_pages/compare_cohorts.py", title="Compare cohorts", icon=":material/difference:"),
    st.Page("app_pages/market_view.py", title="Per market", icon=":material/candlestick_chart:"),
    st.Page("app_pages/cost_vs_score.py", title="Cost vs score", icon=":material/payments:"),
]

navigation = st.navigation(PAGES)
st.sidebar.title("Bettor Arena")
sidebar()
navigation.run()
