"""Reading a publication: records (no I/O), YAML and CSV with located errors, the
repository walk, the claims' reference checks, what MkDocs may publish, whether a run's
invocation says what its page shows, and a publication as it stood at a git revision."""
