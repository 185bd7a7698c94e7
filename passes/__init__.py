"""Cain's passes, one module each, named as on the command line."""
