"""What the language gives a ruleset at run time, whichever engine runs it: values and their cost,
the built-in functions, regular expressions, dice and the evaluation error. The checker reads the
built-ins' registry; both engines call them."""
