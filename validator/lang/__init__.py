"""The language front end: syntax, AST, loading of modules, the checked program and its checks."""
