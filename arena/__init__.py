"""The composition root: config, clock, storage, cohorts, rounds, jobs, scoring, reports, CLI."""
