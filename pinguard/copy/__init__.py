"""`pinguard copy`: the locked images copied digest for digest to another registry, and the lock's record of it."""
