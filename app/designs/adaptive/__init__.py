"""The adaptive design: judged edits drawn in batches as reading goes, each at a recorded
probability chosen to narrow the target figure fastest. It reads like a validation study
(app/designs/rubric/); what is its own is how its cases arrive: the score-based prior
(prior.py), the edit model (edits.py), the batches and their replay (draws.py, batches.py),
the budget in reads (budget.py), and the background top-up that draws the next batch
(top_up.py)."""
