"""Agreement between the judge and the readers, and among the readers (issue 4)."""
