"""Dashboard pages, run by ``st.navigation`` in ``dashboard/app.py`` (a package so installs ship them)."""
