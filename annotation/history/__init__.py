"""The audit history of pyramids and peer annotations (every editing action recorded), the basis
of undo and redo; the REST side of documents (ETag / If-Match, undo, redo, ``history/``).
"""
