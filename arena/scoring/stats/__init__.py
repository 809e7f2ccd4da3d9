"""Statistics: the market-clustered bootstrap, intervals, and pooling across cohorts."""
