"""Cases: the filter, the list, one case, the facet counts and the text search."""
