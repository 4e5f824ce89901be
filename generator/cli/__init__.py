"""The command line: a Typer app, one module per command group; the only room that exits."""

from .app import app, main

__all__ = ["app", "main"]
