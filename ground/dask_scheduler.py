"""Which Dask cluster a stage may join, and joining or starting it: shared by the page checks
(evaluator/verification/dask_checks.py) and the embedding builder (builders/embedding/execution/dask_encoding.py).

Only loopback addresses are joined over plain TCP; any other scheduler must be `tls://` with
Dask's own TLS settings (`distributed.comm.tls.*`), so inputs, pages and vectors never cross a
network in the clear. Dask is imported inside the functions: importing this module costs nothing.
"""

from __future__ import annotations

import ipaddress
import logging
from urllib.parse import urlsplit

from ground.errors import RefusedInput

CONNECT_SECONDS = 10  # a scheduler that has not answered by then is refused (exit 2, nothing written)


class ClusterRefused(RefusedInput):
    """A cluster option that cannot be honoured (address, TLS settings, worker count)."""


def check_address(address: str) -> None:
    """Plain TCP only to this machine; anything else over TLS with Dask's TLS settings configured."""
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme == "tls":
        from distributed.security import Security

        security = Security()
        # the TLS settings are attributes Security sets from Dask's configuration, which its types omit
        if not (getattr(security, "tls_ca_file", None) and getattr(security, "tls_client_cert", None)):
            raise ClusterRefused(f"--scheduler {address}: TLS needs Dask's distributed.comm.tls.ca-file and "
                                 f"distributed.comm.tls.client.cert (and .key) configured (docs/scale.md)")
        return
    if parts.scheme != "tcp":
        raise ClusterRefused(f"--scheduler {address}: only tcp:// (loopback) or tls:// addresses")
    if not is_loopback(address):
        raise ClusterRefused(f"--scheduler {address}: plain TCP only to a loopback address; join another machine "
                             f"over tls:// with Dask's TLS settings (docs/scale.md)")


def is_loopback(address: str) -> bool:
    """Whether the address's host is this machine's loopback (127.0.0.0/8, ::1, localhost)."""
    host = urlsplit(address if "://" in address else f"tcp://{address}").hostname or ""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def connect(scheduler: str):
    """A Dask client of the scheduler at `scheduler` (checked first), or ClusterRefused."""
    from distributed import Client
    from distributed.security import Security

    check_address(scheduler)
    try:
        return Client(scheduler, security=Security() if scheduler.startswith("tls://") else None,
                      timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError) as exc:
        raise ClusterRefused(f"--scheduler {scheduler}: no Dask scheduler answered ({exc})") from None


def start_local(workers: int):
    """A local cluster of `workers` single-threaded worker processes on 127.0.0.1, and its client."""
    from distributed import Client, LocalCluster

    # no dashboard; the scheduler still serves its small HTTP routes, on a free loopback port rather
    # than on 8787 (taken there, Dask warns "Port 8787 is already in use" inside the lab's output)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, silence_logs=logging.ERROR,
                           scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
    return cluster, Client(cluster)
