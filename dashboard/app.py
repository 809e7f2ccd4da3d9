"""The dashboard's single entry: ``streamlit run dashboard/app.py`` (or ``arena dashboard``).

It sets the page up, draws the shared sidebar and hands over to the page chosen in the
navigation. Pages live in ``dashboard/pages/`` and are listed here explicitly.
"""

from __future__ import annotations

import streamlit as st

from dashboard.widgets import sidebar

st.set_page_config(page_title="Bettor Arena", page_icon="🎯", layout="wide")

PAGES = [
    st.Page("pages/leaderboard.py", title="Leaderboard", icon=":material/leaderboard:", default=True),
    st.Page("pages/cohort.py", title="Cohort", icon=":material/groups:"),
    st.Page("pages/agent.py", title="Agent", icon=":material/smart_toy:"),
    st.Page("pages/markets.py", title="Markets", icon=":material/query_stats:"),
    st.Page("pages/calibration.py", title="Calibration", icon=":material/straighten:"),
]

navigation = st.navigation(PAGES)
st.sidebar.title("Bettor Arena")
sidebar()
navigation.run()
