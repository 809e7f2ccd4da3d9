"""Storage: sqlmodel tables, engines, units of work, migrations and dialect-correct upserts."""
