"""An operator's certificates, as a hospital's CA would issue them: a CA and a signer."""

import datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ORG = "Example Hospital Imaging Research"


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORG)])


def operator_pair(folder: Path, *, signer_is_ca: bool = False,
                  days: int = 365) -> tuple[Path, Path]:
    """(certificate chain file, key file) under ``folder``."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())

    def made(subject: str, issuer: str, public: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        return (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
                .public_key(public).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(days=1))
                .not_valid_after(now + datetime.timedelta(days=days)))

    ca = (made("Hospital CA", "Hospital CA", ca_key.public_key())
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf = (made("Imaging research signer", "Hospital CA", key.public_key())
            .add_extension(x509.BasicConstraints(ca=signer_is_ca, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False),
                           critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    folder.mkdir(parents=True, exist_ok=True)
    cert, key_file = folder / "signer.pem", folder / "signer.key"
    pem = serialization.Encoding.PEM
    cert.write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert, key_file
