"""The real-or-edited design (a visual Turing test): one image per sampled source image, its
original or its accepted edit, and the reader says which, with a confidence and, for
"edited", where. Its parts: the design (design.py), the answers (answers.py, answers_csv.py),
the ratings as MRMC reads them (ratings.py), the figures (figures.py) and the panel's ROC
analysis with the readers random (panel.py)."""
