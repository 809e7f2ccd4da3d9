"""Live mode: the jobs ``arena serve`` runs over every live cohort, and the venue sync."""
