"""The originals and their edits as DICOM (highdicom): Secondary Capture images with Synthetic
Data YES on every edit and NO on every original, a Structured Report of the judge's verdict
and the readers' consensus per edit (instances.py, report.py), under UIDs that are the same
on every export (uids.py); written to a folder (export.py) or sent to a DICOMweb server
(send.py)."""
