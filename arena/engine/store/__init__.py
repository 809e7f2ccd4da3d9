"""The engine's units of work: claims, the fill log and ledgers, rounds and their snapshots."""
