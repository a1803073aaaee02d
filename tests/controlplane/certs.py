"""Certificates and keys for the test control plane, generated with `cryptography` (installed with ansible-core).

One CA signs everything: the kube-apiserver serving certificate and one client certificate per identity
(admin in system:masters, kube-controller-manager, kube-scheduler). The service-account signing key is a
separate RSA key pair, as in a kubeadm cluster. Keys are small and certificates short-lived: they only live
for one test session.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=2)


@dataclass(frozen=True)
class Pair:
    cert: Path
    key: Path


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> Path:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)
    return path


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


class CertificateAuthority:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        subject = _name("descheduler-fleet-test-ca")
        self._cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                      .public_key(self._key.public_key()).serial_number(x509.random_serial_number())
                      .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
                      .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                      .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                   content_commitment=False, key_encipherment=False,
                                                   data_encipherment=False, key_agreement=False,
                                                   encipher_only=False, decipher_only=False), critical=True)
                      .sign(self._key, hashes.SHA256()))
        self.pair = Pair(directory / "ca.crt", _write_key(directory / "ca.key", self._key))
        self.pair.cert.write_bytes(self._cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, filename: str, common_name: str, *, organization: str | None = None,
              server_names: tuple[str, ...] = ()) -> Pair:
        """A leaf certificate: a server certificate when `server_names` are given, else a client certificate."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server_names else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (x509.CertificateBuilder().subject_name(_name(common_name, organization))
                   .issuer_name(self._cert.subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if server_names:
            builder = builder.add_extension(x509.SubjectAlternativeName([_general_name(n) for n in server_names]),
                                            critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        pair = Pair(self.directory / f"{filename}.crt", _write_key(self.directory / f"{filename}.key", key))
        pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return pair


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def service_account_keys(directory: Path) -> Pair:
    """The key pair kube-apiserver verifies and kube-controller-manager signs service-account tokens with."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = directory / "sa.pub"
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    return Pair(public, _write_key(directory / "sa.key", key))
