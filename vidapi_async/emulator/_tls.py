"""Certificates for serving the emulator over https: a self-signed one for 127.0.0.1
(and localhost), made with the ``cryptography`` package, or the caller's own."""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl

__all__ = ["make_self_signed", "server_context"]


def make_self_signed(directory: str, host: str = "127.0.0.1") -> tuple[str, str]:
    """Write ``emulator-cert.pem`` and ``emulator-key.pem`` into ``directory``: a
    certificate for ``host``, 127.0.0.1 and localhost, valid for 30 days. It is its own
    CA: trust the certificate file. Needs the ``tls`` extra (``pip install ".[tls]"``
    from a checkout)."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        raise RuntimeError(
            "a self-signed certificate needs the cryptography package: "
            'the tls extra: pip install ".[tls]" from a checkout, or the wheel with [tls] '
            "(or give your own: tls_cert=/tls_key=, "
            "--tls-cert/--tls-key)"
        ) from None
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vidapi emulator")])
    names: list[x509.GeneralName] = [x509.DNSName("localhost")]
    for address in {host, "127.0.0.1"}:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(address)))
        except ValueError:
            names.append(x509.DNSName(address))
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = os.path.join(directory, "emulator-cert.pem")
    key_path = os.path.join(directory, "emulator-key.pem")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    return cert_path, key_path


def server_context(cert: str, key: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context
