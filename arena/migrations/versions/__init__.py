"""Alembic revisions (a package so that the installed distribution ships them)."""
