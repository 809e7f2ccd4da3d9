"""The dashboard's single entry: ``streamlit run dashboard/app.py`` (or ``arena dashboard``).

It sets the page up, draws the shared sidebar and hands over to the page chosen in the
navigation. Pages live in ``dashboard/app_pages/``, listed here explicitly. Not ``pages/``:
Streamlit also serves that folder the legacy way, so a deep link such as ``/cohort`` opened in
a new tab would run the page without this entry file (no sidebar, no page setup).
"""

from __future__ import annotations

import streamlit as st

from dashboard.widgets import sidebar

# An emoji favicon is drawn by the page itself; without one, or with a Material icon, browsers
# fetch the icon from Google.
st.set_page_config(page_title="Bettor Arena", page_icon="🎯", layout="wide")

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
