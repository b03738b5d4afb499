"""Readers and writers of annotation file formats (pure Python, no Django).

DUCView (.pyr pyramids, .pan peer annotations) and NIST file names.
"""

from annotation.formats.annotator_table import AnnotatorTable, AnnotatorTableError, parse_annotator_table
from annotation.formats.ducview import DEFAULT_MAX_BYTES, parse_peer_annotation, parse_pyramid
from annotation.formats.errors import DucViewError
from annotation.formats.identity import (
    CONTENT,
    FILE_NAME,
    FILE_STEM,
    OPTION,
    TABLE,
    FileIdentity,
    Named,
    NameOptions,
    Origin,
    identify,
    origin,
    same_again,
    same_origin,
)
from annotation.formats.model import (
    NON_MATCHING_LABEL,
    SCU,
    Contributor,
    LegacyIssue,
    Part,
    PeerAnnotationFile,
    PeerMatch,
    PeerPart,
    Pyramid,
    Reference,
    Reject,
    Repair,
    Report,
)
from annotation.formats.nist_names import NistName, parse_nist_filename, peer_key
from annotation.formats.writer import write_peer_annotation, write_pyramid

__all__ = [
    "CONTENT",
    "FILE_NAME",
    "FILE_STEM",
    "OPTION",
    "TABLE",
    "AnnotatorTable",
    "AnnotatorTableError",
    "parse_annotator_table",
    "FileIdentity",
    "Named",
    "Origin",
    "origin",
    "same_again",
    "same_origin",
    "NameOptions",
    "identify",
    "peer_key",
    "DEFAULT_MAX_BYTES",
    "NON_MATCHING_LABEL",
    "SCU",
    "Contributor",
    "DucViewError",
    "LegacyIssue",
    "NistName",
    "Part",
    "PeerAnnotationFile",
    "PeerMatch",
    "PeerPart",
    "Pyramid",
    "Reference",
    "Reject",
    "Repair",
    "Report",
    "parse_nist_filename",
    "parse_peer_annotation",
    "parse_pyramid",
    "write_peer_annotation",
    "write_pyramid",
]
