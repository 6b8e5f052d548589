"""OCI distribution client. Importing this package is cheap; `client` pulls in requests."""
