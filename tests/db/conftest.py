"""Fixtures of the storage tests: every backend test runs on both PostgreSQL write paths."""

from tests.storage_backends import backend

__all__ = ["backend"]
