"""`python -m app.cli`, as the tests start a worker process."""

from app.cli.root import main

main()
