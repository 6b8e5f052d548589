"""The scanner: every image reference under some paths, each file read by its source, charts and kustomizations
judged by the tool that deploys them."""
