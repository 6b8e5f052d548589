"""Admission policies exported from the lock: the cluster admits only images pinned to a locked digest.

Two formats, one module each, both validate-only (nothing is mutated at admission,
so GitOps tools see no drift):

- `vap`: ValidatingAdmissionPolicies (CEL, no webhook), one for each shape of kind
  (`kinds`), their bindings, and the params ConfigMaps that hold the lock (`params`);
- `kyverno`: a Kyverno ClusterPolicy with the digests inline.

A digest counts whether it is the locked index's or one of its platform images'
(`pinguard.lock.locked.admitted`). The cluster judges the digest alone, whatever name
the image is pulled by: a digest names its content, so what passes is content the lock
holds; `check`, `post-render`, `run` and `audit` also require the name to be the
entry's (or a copy's). The
objects are the same for the same lock, namespaces, mode and kinds, byte for byte; the
YAML names the lockfile and its sha256 in a comment and in annotations. Every object an
export writes is named after the namespaces it binds and labelled with them
(`pinguard.dev/scope`), so no two exports share an object.

"""
