"""Live scheduling: APScheduler jobs for sync, rounds, marks, settlement and completion.

Only one ``arena serve`` runs the scheduler at a time (a lease row in the database elects it);
every job run also claims its time bucket, so even two leaders could not run a job twice.
"""
