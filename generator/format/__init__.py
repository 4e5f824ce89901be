"""The file formats of FORMAT.md as code: pydantic models, JSON Schemas, and the small
rules every room shares (dotted keys, condition labels, file hashes). No I/O."""
