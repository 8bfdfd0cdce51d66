"""Read knowledge-base articles, resolved tickets and tickets from files into domain objects.

Readers never touch a database and never raise for bad content: they return the records that
read cleanly plus one ``IngestProblem`` per unusable file, line or row, and the caller decides
what to write. Only a path that does not exist, or a file whose extension no reader accepts,
raises ``UserError``.
"""

from __future__ import annotations

from supportagent.ingest.common import (
    MAX_FIELD_BYTES,
    MAX_FILE_BYTES,
    IngestProblem,
    IngestResult,
    Progress,
)
from supportagent.ingest.kb import KB_SUFFIXES, read_kb
from supportagent.ingest.records import RECORD_SUFFIXES
from supportagent.ingest.rows import read_batch, read_resolved, read_tickets

__all__ = [
    "KB_SUFFIXES",
    "MAX_FIELD_BYTES",
    "MAX_FILE_BYTES",
    "RECORD_SUFFIXES",
    "IngestProblem",
    "IngestResult",
    "Progress",
    "read_batch",
    "read_kb",
    "read_resolved",
    "read_tickets",
]
