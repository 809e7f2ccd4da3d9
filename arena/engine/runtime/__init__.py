"""A cohort ready to run: frozen config, market source, HTTP clients, budgets, views, quotes."""
