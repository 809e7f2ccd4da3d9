"""The books after a round: marks to market, settlement, resolutions and completion."""
