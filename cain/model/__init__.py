"""Plain-Python values every stage shares: goals, filters, programs, the SCAMP-5 instruction table and
the approximation of weights by goals."""
