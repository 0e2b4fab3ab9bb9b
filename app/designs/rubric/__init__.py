"""The rubric designs: the original beside the edit, the four questions and the overall
verdict. One reading screen and one answer (design.py), three variants of what is sampled
(variants.py): validation, accepted edits and whole runs. The adaptive design reads the same
way and draws its own cases (app/designs/adaptive/)."""
