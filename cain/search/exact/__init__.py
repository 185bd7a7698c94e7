"""Exact search and proofs: iterative deepening over the goal model (`deepening`), CP-SAT over every program
(`sat`), the exact search over bus micro-ops (`bus`), lower bounds (`bound`), the refutation of full
goal-bags (`full`) and shorter stretches of the heuristic's plans (`window`)."""
