"""Checking the readers as carefully as the judge: their accuracy on cases whose answer is
settled, and a test for a drop in it while a study runs."""
