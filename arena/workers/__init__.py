"""Scale-out: a work queue in PostgreSQL and the ``arena worker`` processes that drain it."""
