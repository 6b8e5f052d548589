"""Output formats for findings: each a module with a function writing findings to a stream it is handed.

Checking never prints; `pinguard check` picks a writer by name (`formats`).
"""
