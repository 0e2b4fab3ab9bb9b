"""The pairwise design: which of two edits of the same source image is better, read blind.

Built in steps (issue 30): the pairs it samples (pairs.py) come first; the reading screen,
the answers, the figures and the exports follow, each behind app/designs' interface.
"""
