"""Dask's TLS for ``--cluster``: the ``Security`` this process connects (or runs ``local:N``) with.

The files come from the config file's ``[cluster]`` (``referee.settings.cluster``).
``require_encryption`` holds every connection to TLS, so a ``tcp://`` address
with certificates, or a ``tls://`` one without, is refused here in one line
rather than failing somewhere inside Dask.
"""

from __future__ import annotations

from typing import Any

from distributed.security import Security

from referee.settings.cluster import TLS_SCHEME, ClusterTLS
from referee.tables.job import TableError

__all__ = ["address_problem", "security_for"]

_security: Any = Security  # untyped in distributed


def security_for(tls: ClusterTLS, *, local: bool) -> Security:
    """This process's side of the cluster; with ``local``, the scheduler's and workers' too."""
    ca, cert, key = str(tls.ca_file), str(tls.cert_file), str(tls.key_file)
    own = {"tls_client_cert": cert, "tls_client_key": key}
    if local:  # local:N: its scheduler and workers are this process's, with its certificate
        own |= {
            "tls_scheduler_cert": cert,
            "tls_scheduler_key": key,
            "tls_worker_cert": cert,
            "tls_worker_key": key,
        }
    try:
        made: Security = _security(tls_ca_file=ca, require_encryption=True, **own)
    except (OSError, ValueError) as error:  # a certificate and key that do not match, say
        raise TableError(f"[cluster] certificates: {error}") from None
    return made


def address_problem(address: str, tls: ClusterTLS | None) -> str | None:
    """Why ``--cluster ADDRESS`` does not go with the file's certificates (or their absence)."""
    if address.startswith("local:"):
        return None
    if tls is not None and not address.startswith(TLS_SCHEME):
        return (
            f"--cluster {address}: the file's [cluster] certificates need the scheduler's "
            f"TLS address ({TLS_SCHEME}HOST:PORT)"
        )
    if tls is None and address.startswith(TLS_SCHEME):
        return (
            f"--cluster {address}: a TLS scheduler needs the certificates named in the "
            f"file's [cluster] section (ca_file, cert_file, key_file); see docs/cluster.md"
        )
    return None
