"""[cluster]: the TLS certificates that let a machine into the organiser's Dask cluster.

With this section, ``--cluster`` speaks TLS to the scheduler and Dask's TLS is
mutual (``distributed.security``: every end must show a certificate signed by
the section's certificate authority), so a worker joins only if it holds a
certificate the organiser signed, and nobody without one can reach the
scheduler to submit work or read results.  ``local:N`` runs its scheduler and
workers with this process's own certificate.  docs/cluster.md says how to
make the certificates.
"""

from __future__ import annotations

import dataclasses
import stat
from pathlib import Path

from referee.settings.sections import Section, fail

__all__ = ["ClusterSection", "ClusterTLS", "tls_of"]

TLS_SCHEME = "tls://"


class ClusterSection(Section, frozen=True):
    """The file's ``[cluster]``: PEM files, each relative to the file."""

    ca_file: Path  # the organiser's certificate authority: it signed every node's certificate
    cert_file: Path  # this process's certificate, signed by ``ca_file``
    key_file: Path  # its private key: readable by its owner only


@dataclasses.dataclass(frozen=True)
class ClusterTLS:
    """Checked paths of the certificate authority, this process's certificate and its key."""

    ca_file: Path
    cert_file: Path
    key_file: Path


def tls_of(section: ClusterSection | None, path: Path, where: str = "cluster") -> ClusterTLS | None:
    """The section's files, each one there and readable, the key by its owner alone;
    ``ConfigError`` naming the key otherwise."""
    if section is None:
        return None
    for name in ("ca_file", "cert_file", "key_file"):
        file: Path = getattr(section, name)
        try:
            mode = file.stat().st_mode
            with file.open("rb") as stream:
                head = stream.read(64)
        except OSError as error:
            fail(path, f"{where}.{name}", f"cannot read {str(file)!r}: {error.strerror or error}")
        if b"-----BEGIN " not in head:
            fail(path, f"{where}.{name}", f"{str(file)!r} is not a PEM file (-----BEGIN ...)")
        if name == "key_file" and mode & (stat.S_IRWXG | stat.S_IRWXO):
            fail(
                path,
                f"{where}.{name}",
                f"{str(file)!r} can be read by others than its owner: chmod 600 it",
            )
    return ClusterTLS(section.ca_file, section.cert_file, section.key_file)
