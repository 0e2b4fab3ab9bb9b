"""The generate-and-judge pipeline (instruction, edit, judge, refine), run as durable jobs.

Not built yet: it arrives with the pipeline issue. It will talk to the app only through
the database (job rows, runs, attempts, verdicts), never through app.web.routes.
"""
