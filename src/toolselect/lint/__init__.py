"""Before the model is asked: findings about the tool surface (surface.py) and the golden set
(golden.py), each a `Finding` (finding.py). Pure.

Each finding has a code, a severity, where it is (tool, case, file:line), a message and a fix.
`toolselect lint` fails on errors (and on warnings with --strict). `eval` runs the same checks but
stops only for golden-set errors — a case that can never pass is not a measurement — and reports
the rest with its results: the surface, broken parts included, is what is being measured.
"""
