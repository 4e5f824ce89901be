"""The ledger as pages: escaping, Altair charts, run and claim pages, templates and assets.
Returns {path: bytes} and strings; never reads or writes a file."""
