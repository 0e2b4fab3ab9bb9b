"""The certificate and key that sign every C2PA manifest the app writes.

The operator's own (MEDBANANA_C2PA_CERT and MEDBANANA_C2PA_KEY, PEM files), checked when the
server starts so that a bad pair stops it with one line naming the setting; or, when neither
is set, a certificate this server makes for itself on first use and keeps in var_dir. Its
issuer is named as self-signed, and a reader of the manifest is told so: C2PA needs the
signing certificate to be issued by a CA, so it is a local CA and a signer under it, both
made here and trusted by nobody else.
"""

import contextlib
import datetime
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from app.settings import Settings, SettingsError

# The organisation of the certificates this server makes; a reader of a manifest that sees
# it is told the signature proves only which server wrote the file.
SELF_SIGNED_ORG = "MedBanana Review (self-signed, trusted by no one else)"
SELF_SIGNED_DIR = "c2pa"
CERT_FILE, KEY_FILE = "signer.pem", "signer.key"
VALID_YEARS = 10
EC_ALGORITHMS = {"secp256r1": "es256", "secp384r1": "es384", "secp521r1": "es512"}


@dataclass(frozen=True)
class SigningIdentity:
    chain_pem: bytes  # the signing certificate first, then its issuers
    key_pem: bytes
    algorithm: str  # C2PA's name: es256, ps256, ed25519, ...
    self_signed: bool
    subject: str  # who signs, as the certificate names it

    @property
    def source(self) -> str:
        return ("a certificate this server made for itself (self-signed)" if self.self_signed
                else f"the operator's certificate ({self.subject})")


def signing_identity(settings: Settings) -> SigningIdentity:
    """The operator's pair when configured (SettingsError naming the setting when it is
    unusable), else this server's own, made on first use."""
    cert, key = settings.c2pa_cert, settings.c2pa_key
    if cert is None and key is None:
        return own_identity(settings.var_dir / SELF_SIGNED_DIR)
    if cert is None or key is None:
        missing = "MEDBANANA_C2PA_CERT" if cert is None else "MEDBANANA_C2PA_KEY"
        raise SettingsError(f"{missing} is not set; the C2PA certificate and key are set "
                            "together, or neither (a self-signed one is then made)")
    chain_pem = _read_setting("MEDBANANA_C2PA_CERT", cert)
    key_pem = _read_setting("MEDBANANA_C2PA_KEY", key)
    return checked_identity(chain_pem, key_pem, self_signed=False,
                            cert_name=f"MEDBANANA_C2PA_CERT ({cert})",
                            key_name=f"MEDBANANA_C2PA_KEY ({key})")


def _read_setting(name: str, path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise SettingsError(f"{name} ({path}) cannot be read: {error.strerror}") from None


def checked_identity(chain_pem: bytes, key_pem: bytes, *, self_signed: bool,
                     cert_name: str = "the certificate", key_name: str = "the key",
                     now: datetime.datetime | None = None) -> SigningIdentity:
    """The pair, checked as far as can be before a signature: PEM that parses, a signing
    certificate in date and not a CA, a key that is its own, an algorithm C2PA signs with."""
    try:
        chain = x509.load_pem_x509_certificates(chain_pem)
    except ValueError:
        raise SettingsError(f"{cert_name} holds no PEM certificate") from None
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError) as error:
        raise SettingsError(f"{key_name} is not an unencrypted PEM private key: {error}") from None
    leaf = chain[0]
    now = now or datetime.datetime.now(datetime.UTC)
    if not leaf.not_valid_before_utc <= now <= leaf.not_valid_after_utc:
        raise SettingsError(f"{cert_name} is not valid now (from {leaf.not_valid_before_utc:%Y-%m-%d} "
                            f"to {leaf.not_valid_after_utc:%Y-%m-%d})")
    try:
        if leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca:
            raise SettingsError(f"{cert_name} is a CA certificate; C2PA signs with an end-entity "
                                "certificate issued by one")
    except x509.ExtensionNotFound:
        pass
    algorithm = _algorithm(key, cert_name, key_name)
    if not _same_key(key, leaf):
        raise SettingsError(f"{key_name} is not the key of the certificate in {cert_name}")
    subject = ", ".join(a.rfc4514_string() for a in leaf.subject)
    return SigningIdentity(chain_pem, key_pem, algorithm, self_signed, subject)


def _algorithm(key: object, cert_name: str, key_name: str) -> str:
    if isinstance(key, ec.EllipticCurvePrivateKey):
        found = EC_ALGORITHMS.get(key.curve.name)
        if found is None:
            raise SettingsError(f"{key_name} is on curve {key.curve.name}; C2PA signs with "
                                "P-256, P-384 or P-521")
        return found
    if isinstance(key, rsa.RSAPrivateKey):
        if key.key_size < 2048:
            raise SettingsError(f"{key_name} is a {key.key_size}-bit RSA key; C2PA needs 2048 or more")
        return "ps256"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "ed25519"
    raise SettingsError(f"{key_name} is of a kind C2PA does not sign with (EC, RSA or Ed25519)")


def _same_key(key: object, leaf: x509.Certificate) -> bool:
    """Whether ``key`` signs what the certificate's public key verifies."""
    probe = b"medbanana c2pa key check"
    public = leaf.public_key()
    try:
        if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(public, ec.EllipticCurvePublicKey):
            public.verify(key.sign(probe, ec.ECDSA(hashes.SHA256())), probe, ec.ECDSA(hashes.SHA256()))
        elif isinstance(key, rsa.RSAPrivateKey) and isinstance(public, rsa.RSAPublicKey):
            public.verify(key.sign(probe, padding.PKCS1v15(), hashes.SHA256()), probe,
                          padding.PKCS1v15(), hashes.SHA256())
        elif isinstance(key, ed25519.Ed25519PrivateKey) and isinstance(public, ed25519.Ed25519PublicKey):
            public.verify(key.sign(probe), probe)
        else:
            return False
    except InvalidSignature:
        return False
    return True


def own_identity(folder: Path) -> SigningIdentity:
    """This server's self-signed pair, made once (several processes may race to make it:
    each builds its own in a private folder and moves it into place in one step, and the
    losers read the winner's)."""
    if not (folder / CERT_FILE).is_file():
        folder.parent.mkdir(parents=True, exist_ok=True)
        made = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".c2pa-"))
        try:
            chain_pem, key_pem = self_signed_pair()
            (made / CERT_FILE).write_bytes(chain_pem)
            descriptor = os.open(made / KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as out:
                out.write(key_pem)
            with contextlib.suppress(OSError):  # another process made it first
                os.rename(made, folder)
        finally:
            shutil.rmtree(made, ignore_errors=True)
    return checked_identity((folder / CERT_FILE).read_bytes(), (folder / KEY_FILE).read_bytes(),
                            self_signed=True, cert_name=str(folder / CERT_FILE),
                            key_name=str(folder / KEY_FILE))


def self_signed_pair(now: datetime.datetime | None = None) -> tuple[bytes, bytes]:
    """(chain PEM, key PEM): a local CA and an ES256 signer it issues, as C2PA's certificate
    profile asks (the signer not a CA, digitalSignature, the emailProtection purpose)."""
    now = now or datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name, name = _name("MedBanana Review local CA"), _name("MedBanana Review signer")
    ca = (_certificate(ca_name, ca_name, ca_key.public_key(), now)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(_usage(cert_sign=True), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (_certificate(name, ca_name, key.public_key(), now)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_usage(cert_sign=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    chain = leaf.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(serialization.Encoding.PEM)
    return chain, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, SELF_SIGNED_ORG)])


def _certificate(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey,
                 now: datetime.datetime) -> x509.CertificateBuilder:
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(public_key).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=365 * VALID_YEARS)))


def _usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=not cert_sign, content_commitment=False,
                         key_encipherment=False, data_encipherment=False, key_agreement=False,
                         key_cert_sign=cert_sign, crl_sign=cert_sign, encipher_only=False,
                         decipher_only=False)
