"""Moving data in and out: DUCView ``.pyr``/``.pan`` imports and exports, SacreROUGE files, the
dataset archive, uploads from the pages, and their API (a dataset's tables and a document's file
as downloads too).
"""
