"""The signer: the operator's pair, checked at start-up, or one the server makes itself."""

import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.root import cli
from app.provenance.marker import Marker
from app.provenance.signing import own_identity
from app.settings import Settings, SettingsError
from app.web.main import create_app
from tests.config import server_settings
from tests.provenance.certificates import operator_pair


def test_a_server_makes_its_own_signer_once_and_keeps_the_key_private(tmp_path: Path) -> None:
    first = own_identity(tmp_path / "c2pa")
    again = own_identity(tmp_path / "c2pa")
    assert first == again and first.self_signed and first.algorithm == "es256"
    assert stat.S_IMODE((tmp_path / "c2pa" / "signer.key").stat().st_mode) == 0o600
    assert "self-signed" in first.source


def test_the_operators_pair_signs(tmp_path: Path) -> None:
    cert, key = operator_pair(tmp_path / "pki")
    settings = Settings(var_dir=tmp_path / "var", c2pa_cert=cert, c2pa_key=key)
    marker = Marker.from_settings(settings)
    assert not marker.identity.self_signed
    assert "Imaging research signer" in marker.identity.source
    assert not (tmp_path / "var" / "c2pa").exists()  # no self-signed pair is made beside it


def _bad_pairs(tmp_path: Path) -> dict[str, tuple[dict[str, Path], str]]:
    cert, key = operator_pair(tmp_path / "good")
    other_cert, other_key = operator_pair(tmp_path / "other")
    ca_cert, ca_key = operator_pair(tmp_path / "ca", signer_is_ca=True)
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate")
    return {
        "missing file": ({"c2pa_cert": tmp_path / "nowhere.pem", "c2pa_key": key},
                         "MEDBANANA_C2PA_CERT"),
        "no PEM": ({"c2pa_cert": garbage, "c2pa_key": key}, "MEDBANANA_C2PA_CERT"),
        "key not a key": ({"c2pa_cert": cert, "c2pa_key": garbage}, "MEDBANANA_C2PA_KEY"),
        "another's key": ({"c2pa_cert": cert, "c2pa_key": other_key}, "MEDBANANA_C2PA_KEY"),
        "only the certificate": ({"c2pa_cert": other_cert}, "MEDBANANA_C2PA_KEY"),
        "a CA as signer": ({"c2pa_cert": ca_cert, "c2pa_key": ca_key}, "MEDBANANA_C2PA_CERT"),
    }


@pytest.mark.parametrize("case", ["missing file", "no PEM", "key not a key", "another's key",
                                  "only the certificate", "a CA as signer"])
def test_a_bad_pair_stops_the_server_naming_the_setting(tmp_path: Path, case: str) -> None:
    values, setting = _bad_pairs(tmp_path)[case]
    with pytest.raises(SettingsError, match=setting):
        create_app(server_settings(tmp_path / "var", **values))


def test_serve_refuses_to_start_with_one_line(tmp_path: Path) -> None:
    cert, _ = operator_pair(tmp_path / "pki")
    result = CliRunner().invoke(cli, ["serve"], env={
        "MEDBANANA_VAR_DIR": str(tmp_path / "var"), "MEDBANANA_DEMO": "true",
        "MEDBANANA_C2PA_CERT": str(cert), "MEDBANANA_C2PA_KEY": str(tmp_path / "none.key")})
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "MEDBANANA_C2PA_KEY" in lines[0] and "cannot be read" in lines[0]
