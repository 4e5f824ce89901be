"""Reading a publication: records (no I/O), YAML and CSV with located errors, the
repository walk, and the claims' reference checks."""
