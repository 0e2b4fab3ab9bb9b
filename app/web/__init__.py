"""The web edge: the app factory, dependencies, errors, templating, request guards and
logs, the API schemas, and the routes."""
