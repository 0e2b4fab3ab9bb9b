"""The whole data set's quality: the judge on every edit, corrected by the readers (issue 16)."""
