"""Shared by every layer: the injected clock, process settings, config value types, provenance."""
