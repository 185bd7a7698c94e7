"""Cain's search engine: reverse goal-bag search from the kernels back to the input (paper 3.2-3.3).

`search(filter, SearchConfig(...))` returns a `SearchResult` whose `program` is the best verified,
register-allocated plan found within the budget.
"""

from cain.search.config import PlanEvent, SearchConfig, SearchResult
from cain.search.engine import search

__all__ = ["PlanEvent", "SearchConfig", "SearchResult", "search"]
