"""The protocols existing clients speak, one module each (docs/reference/protocols.md §2)."""
