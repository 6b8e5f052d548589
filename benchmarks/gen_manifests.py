#!/usr/bin/env python3
"""Write a deterministic benchmark tree of Kubernetes manifests built from the
real files in tests/testdata/corpus (kuberay, kubeflow, k8s, aws-dlc). Each output file is
a real manifest with a one-line header comment naming its copy number, so the
mix of kinds, sizes and shapes is the real one.

    gen_manifests.py OUT_DIR [N=5000]

Files that are not valid YAML (templates) are left out. Prints the count and
the total size."""
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ("kuberay", "kubeflow", "k8s", "aws-dlc")


def sources():
    out = []
    for kind in KINDS:
        folder = os.path.join(HERE, "..", "tests", "testdata", "corpus", kind)
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".yaml", ".yml")):
                continue
            data = open(os.path.join(folder, name), "rb").read()
            try:
                docs = list(yaml.compose_all(data, Loader=yaml.CSafeLoader))
            except yaml.YAMLError:
                continue
            if any(d is not None for d in docs):
                out.append((kind, name, data))
    return out


def main():
    out_dir = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    src = sources()
    total = 0
    for i in range(n):
        kind, name, data = src[i % len(src)]
        sub = os.path.join(out_dir, f"d{i // 500:02d}")
        os.makedirs(sub, exist_ok=True)
        body = f"# copy {i} of {kind}/{name}\n".encode() + data
        with open(os.path.join(sub, f"{i:05d}-{name}"), "wb") as f:
            f.write(body)
        total += len(body)
    print(f"{n} files from {len(src)} sources, {total / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
