"""The stored log as polars frames: their column contracts and their loading from the database."""
