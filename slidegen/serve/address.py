"""Where the preview may listen: loopback unless another address is asked for explicitly."""

from __future__ import annotations

import ipaddress
import socket

from slidegen.errors import UsageError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) means this machine only."""
    name = host.strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(name, None)
    except OSError:
        return False
    addresses = {str(info[4][0]) for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def check_host(host: str, allow_remote: bool = False) -> str:
    """``host`` when it may be bound: loopback always, anything else only when asked for explicitly."""
    if not host:
        raise UsageError("empty host: leave --host out to serve on 127.0.0.1")
    if not allow_remote and not is_loopback(host):
        raise UsageError(
            f"refusing to serve on {host}: the preview is for this machine (127.0.0.1); "
            f"pass --host {host} explicitly to let other machines see it"
        )
    return host


def browser_url(host: str, port: int) -> str:
    """The address to open for a server bound to ``host``:``port`` (a wildcard host opens as loopback)."""
    name = host if ":" not in host else f"[{host.strip('[]')}]"
    if name in ("0.0.0.0", "[::]"):
        name = "127.0.0.1" if name == "0.0.0.0" else "[::1]"
    return f"http://{name}:{port}/"
