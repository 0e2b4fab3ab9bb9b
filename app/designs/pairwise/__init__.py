"""The pairwise design: which of two edits of the same source image is better, read blind.

pairs.py finds the pairs it samples and study.py draws them; answers.py is the reading
screen's answer, figures.py the Bradley-Terry figures and export.py the preference pairs, all
behind app/designs' interface (design.py).
"""
