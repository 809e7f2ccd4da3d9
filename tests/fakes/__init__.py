"""Local stand-ins for external services (real HTTP on loopback)."""
