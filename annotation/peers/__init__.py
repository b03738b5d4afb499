"""Peer annotation and its results: matches, the scoring inputs read from the database, the stored
scores and agreement, and their recomputation after every save (the events that make them stale,
the work, the Celery tasks), the demo study that shows them; the REST resources of annotations
and matches, and the ``full`` documents the editors read.
"""
