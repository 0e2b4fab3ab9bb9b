"""The tamper-evident audit log: every answer version, lock, adjudication decision, export,
judge promotion, regeneration and account change, each record holding the SHA-256 of the one
before (chain.py); the rows it vouches for, by digest (rows.py); and the check of both
(verify.py, `medbanana audit verify`)."""

from app.audit.chain import Head, append, head_of, keep_log, manifest_stamp, record_export, record_row
from app.audit.verify import Verdict, verify

__all__ = ["Head", "Verdict", "append", "head_of", "keep_log", "manifest_stamp", "record_export",
           "record_row", "verify"]
