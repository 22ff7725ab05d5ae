"""The decision journal: one bounded JSON line per event, appended, read back newest first."""
