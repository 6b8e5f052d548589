"""Helm as the judge of charts: what `helm template` renders is what the cluster gets.

Where a helm binary is at hand, a chart's images are read from its renders
(`renders.py`), each traced to the values line that controls it (`trace.py`),
and a pin of a values file is written only when rendering it again shows the
traced images, and nothing else, changed as intended (`confirm.py`, `pinning.py`).
"""
