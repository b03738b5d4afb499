"""Exception raised by the DUCView format readers and writers."""


class DucViewError(ValueError):
    """A DUCView file (or a NIST file name) that cannot be read or written.

    The message says what is wrong and where (element, SCU uid, contributor, part, offsets).
    """


class LightweightFormatError(ValueError):
    """A lightweight-pyramid file (statement CSV, MTurk results, Lite2-3Pyramid folder) that cannot be read.

    The message says what is wrong and where (row, column, file).
    """
