"""The engine: the reference interpreter, the fast backend, the run time, built-ins, values, states."""
