"""Policies: which rules run, at which level, with which options; and running them.

`model.py` is what a policy is, `load.py` reads policy files into one, `catalog.py`
names every rule, `rules/` holds one module per rule, and `run.py` runs them over what
a scan found.
"""
