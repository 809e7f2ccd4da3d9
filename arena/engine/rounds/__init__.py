"""One decision round: the universe, the agents asked, decisions validated, fills stored."""
