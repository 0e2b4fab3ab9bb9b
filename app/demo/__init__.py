"""Synthetic demo data: procedural phantoms written in the generation scripts' exact layout."""
