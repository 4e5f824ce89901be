"""Results from the tools people already run, as run folders: one module per foreign format."""
