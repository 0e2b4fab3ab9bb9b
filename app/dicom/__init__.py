"""DICOM of the originals and their edits (to be filled)."""
