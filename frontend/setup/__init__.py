"""Coordinators set up a study in the pages: datasets, topics with their summaries, DUCView
imports, annotator accounts and assignments, exports."""
