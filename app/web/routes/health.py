"""/healthz and /readyz for load balancers and orchestrators: no login, and nothing but the
state of each check in the answer."""

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from app.health import check_readiness
from app.web.json_response import StrictJSONResponse

router = APIRouter(include_in_schema=False)
NO_STORE = {"Cache-Control": "no-store"}


@router.get("/healthz")
async def liveness() -> StrictJSONResponse:
    """The process answers; nothing else is checked, so a slow database never restarts it."""
    return StrictJSONResponse({"status": "ok"}, headers=NO_STORE)


@router.get("/readyz")
async def readiness(request: Request) -> StrictJSONResponse:
    found = await run_in_threadpool(check_readiness, request.app.state.engine)
    return StrictJSONResponse({"status": "ready" if found.ready else "not ready", "checks": found.checks},
                        status_code=200 if found.ready else 503, headers=NO_STORE)
