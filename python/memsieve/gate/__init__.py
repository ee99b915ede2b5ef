"""The novelty gate: a scope's vectors, threshold and information term, and the cache of scopes.

``config`` holds ``GateConfig``; ``scope_gate`` scores one candidate against a
scope; ``cache`` owns every scope's in-process state; ``ann`` is the hnswlib
index a large scope answers nearest-neighbour queries from.
"""
