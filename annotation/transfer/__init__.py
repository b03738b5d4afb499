"""Moving data in and out: DUCView ``.pyr``/``.pan`` imports and exports, SacreROUGE files, the
dataset archive, uploads from the pages, download names and provenance, and their API.
"""
