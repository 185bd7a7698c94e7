"""Cain's xDSL dialects: `goal` (filters as integer goals) and `scamp5` (macro and bus operations)."""
