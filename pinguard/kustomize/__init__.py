"""kustomize as the judge of kustomizations: what `kubectl kustomize` builds is what the cluster gets.

Where kubectl (or a kustomize binary) is at hand, each kustomization of a scan that no other one
of the scan builds on is built (`builds.py`), every image of the build is traced to the line that
controls it (`trace.py`), and a pin is written only when building again shows the traced images,
and nothing else, changed as intended (`pinning.py`). `graph.py` says, with no binary, which files
a kustomization reads.
"""
