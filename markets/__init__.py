"""Market domain types and the sources that answer "what was known as of time t"."""
