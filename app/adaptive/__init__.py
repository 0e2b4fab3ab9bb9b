"""An adaptive study's next batch, drawn in the background before a reader's list runs dry
(issue 27): what the readers have settled so far in, the next draws out (app/studies/adaptive.py)."""
