"""The rubric designs: the original beside the edit, the four questions and the overall
verdict. One reading screen and one answer (design.py), four variants of what is sampled
(variants.py): validation, accepted edits, whole runs and adaptive."""
