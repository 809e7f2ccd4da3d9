"""The Streamlit dashboard: ``app.py`` (entry), ``app_pages/`` (thin pages), ``queries`` (cached reads),
``figures`` (pure plotly builders), ``tables`` and ``widgets`` (shared display pieces)."""
