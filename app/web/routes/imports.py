"""/imports: the files each import read, and every row it reported."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from app.importer.history import list_import_files, list_problems
from app.web.deps import CursorQuery, IdQuery, SessionDep
from app.web.templating import render

router = APIRouter(include_in_schema=False)
PROBLEMS_PER_PAGE = 100


@router.get("/imports", response_class=HTMLResponse)
def imports_page(
    request: Request, session: SessionDep,
    kind: Annotated[str | None, Query(max_length=32)] = None,
    file: IdQuery = None,
    after: CursorQuery = None,
) -> HTMLResponse:
    context = {
        "files": list_import_files(session), "kind": kind, "file_id": file,
        "problems": list_problems(session, kind=kind, file_id=file, after=after,
                                  limit=PROBLEMS_PER_PAGE),
    }
    return render(request, "importer/list.html", context, partial="importer/_problems.html")
