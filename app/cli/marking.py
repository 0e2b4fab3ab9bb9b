"""The marker every exporting command signs with, or a one-line error naming the setting."""

import typer

from app.provenance.marker import Marker
from app.settings import SettingsError, get_settings


def cli_marker() -> Marker:
    try:
        return Marker.from_settings(get_settings())
    except SettingsError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
