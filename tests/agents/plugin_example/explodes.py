"""A plug-in module whose top-level code fails, for the plug-in error-message tests."""

raise RuntimeError("cannot reach the model server")
