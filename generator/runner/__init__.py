"""The bundled benchmark runner: writes run folders in the format the site reads."""
