"""Reader studies: design, sampling pool, forms, worklists, answers, adjudication, export."""
