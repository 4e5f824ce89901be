"""The file formats of FORMAT.md as code: pydantic models, JSON Schemas, and the small
rules every room shares (dotted keys, condition labels, `claimed:` parsing, file hashes, local
paths, how signed changes and confidence levels are written). No I/O."""
