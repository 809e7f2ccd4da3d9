"""Alembic migrations of the arena database; run through ``arena.db.migrate``."""
