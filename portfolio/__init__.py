"""Pure accounting for the arena: rules, actions, ledgers, marks, settlement and P/L.

Nothing here performs IO or imports another package of this repository, so every number the
arena reports can be recomputed from a fill log with this package alone.
"""
