"""Cohorts: their config (``config``), launching one (``launch``) and its life after (``lifecycle``)."""
