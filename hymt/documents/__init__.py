"""Documents: every format hymt reads, as units to translate, and back.

A format parses a file into `Unit`s (units.py) and renders the translated file from the
pipeline's validated tag trees. Inline markup travels with its sentence as numbered tags
(inline_tags.py).
"""
