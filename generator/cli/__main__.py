"""`python -m generator.cli`: the same as the `benchledger` command."""

from .app import main

main()
