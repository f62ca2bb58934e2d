"""The report: its records (schema.py), built from results (build.py), written and read back (files.py)."""
