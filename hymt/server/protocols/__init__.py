"""The protocols existing clients speak, one module each (api-conventions.md §2)."""
