"""The FastAPI application factory."""

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from sqlalchemy.engine import Engine

from app.db import make_engine
from app.errors import install_error_handlers
from app.routes import api, cases, images, imports
from app.settings import Settings, get_settings
from app.web import STATIC_DIR


def create_app(settings: Settings | None = None, engine: Engine | None = None) -> FastAPI:
    settings = settings or get_settings()
    app = FastAPI(title="MedBanana Review", version="0.1.0",
                  description="Review Med-Banana-50K edits: cases, runs, rounds and judge verdicts.")
    app.state.settings = settings
    app.state.engine = engine or make_engine(settings.resolved_database_url())
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    for router in (cases.router, imports.router, api.router, images.router):
        app.include_router(router)
    install_error_handlers(app)
    return app
