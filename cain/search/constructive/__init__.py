"""The constructive program, built without search for any filter (`program`), and the last kernel formed
over an input when registers are short (`over_input`)."""
