"""The preview server trusts nothing: Host check (DNS rebinding), no folder listings, 4xx for malformed requests."""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from slidegen.serve.events import EventHub
from slidegen.serve.handler import Server, host_allowed, request_path


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    root = tmp_path / "html"
    (root / "media").mkdir(parents=True)
    (root / "assets").mkdir()
    (root / "index.html").write_text("<html><body>index</body></html>", encoding="utf-8")
    (root / "01-x.html").write_text("<html><body>deck</body></html>", encoding="utf-8")
    (root / "media" / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "assets" / "theme.css").write_text("body {}", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("secret", encoding="utf-8")
    srv = Server(("127.0.0.1", 0), EventHub(), root)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv.bound[1], tmp_path
    srv.shutdown()
    srv.server_close()


def get(port: int, path: str, host: str | None = "127.0.0.1", method: str = "GET") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    if host is not None:
        conn.putheader("Host", host)
    conn.endheaders()
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body


def raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def test_pages_and_files_are_served(server: tuple[int, Path]) -> None:
    port, _ = server
    status, body = get(port, "/01-x.html")
    assert status == 200 and b"deck" in body and b"EventSource" in body
    assert get(port, "/")[0] == 200
    assert get(port, "/media/a.png") == (200, b"\x89PNG\r\n\x1a\n")
    assert get(port, "/assets/theme.css?v=1") == (200, b"body {}")
    assert get(port, "/01-x.html", host=f"127.0.0.1:{port}")[0] == 200
    assert get(port, "/01-x.html", host=f"localhost:{port}")[0] == 200
    assert get(port, "/01-x.html", host=f"[::1]:{port}")[0] == 200
    assert get(port, "/media/a.png", method="HEAD")[0] == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "", None])
def test_a_foreign_host_header_is_refused(server: tuple[int, Path], host: str | None) -> None:
    port, _ = server
    status, body = get(port, "/01-x.html", host=host)
    assert status == 421 and b"deck" not in body
    assert get(port, "/media/a.png", host=host, method="HEAD")[0] == 421


def test_host_allowed() -> None:
    assert host_allowed("127.0.0.1:8000", "127.0.0.1")
    assert host_allowed("myname.local:80", "myname.local")
    assert host_allowed("192.168.1.4:8000", "0.0.0.0")
    assert not host_allowed("attacker.example", "127.0.0.1")
    assert not host_allowed("[::1", "127.0.0.1")


@pytest.mark.parametrize("path", ["/assets/", "/media/", "/media", "/assets"])
def test_folders_are_never_listed(server: tuple[int, Path], path: str) -> None:
    port, _ = server
    status, body = get(port, path)
    assert status == 404
    assert b"a.png" not in body and b"theme.css" not in body


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/%00", 400),
        ("/a%00.html", 400),
        ("/../secret.txt", 400),
        ("/media/../../secret.txt", 400),
        ("/%2e%2e/secret.txt", 400),
        ("/%2E%2E/secret.txt", 400),
        ("/media/%2e%2e/%2e%2e/secret.txt", 400),
        ("/%252e%252e/secret.txt", 404),
        ("/..%2fsecret.txt", 400),
        ("/%2e%2e%2fsecret.txt", 400),
        ("/..\\secret.txt", 400),
        ("/%5c..%5csecret.txt", 400),
        ("/%ff", 400),
        ("//etc/passwd", 404),
        ("/nope.html", 404),
        ("/secret.txt", 404),
    ],
)
def test_malformed_and_traversing_paths_get_a_4xx_and_no_file(
    server: tuple[int, Path], path: str, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    port, _ = server
    got, body = get(port, path)
    assert got == status
    assert b"secret" not in body
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "request_line",
    [
        b"GARBAGE\r\n\r\n",
        b"GET\r\n\r\n",
        b"GET / HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
        b"POST /01-x.html HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n",
        b"BREW / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET http://evil.example/01-x.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /\x00 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    ],
)
def test_malformed_requests_get_a_4xx(
    server: tuple[int, Path], request_line: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    port, _ = server
    answer = raw(port, request_line)
    if answer.startswith(b"HTTP/"):
        status = int(answer.split(b" ", 2)[1])
    else:  # a request line without a version is answered as HTTP/0.9: the error page alone
        status = int(answer.split(b"Error code: ", 1)[1][:3])
    assert 400 <= status < 500, answer[:200]
    assert "Traceback" not in capsys.readouterr().err


def test_request_path() -> None:
    assert request_path("/media/a%20b.png?x=1#y") == "/media/a b.png"
    assert request_path("/%252e") == "/%2e"
    assert request_path("/%2e%2e/x") is None
    assert request_path("/a/./b") is None
    assert request_path("x") is None


def test_serve_leaves_build_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from fake_project import make_fake_project

    from slidegen.media.figures import FigureRenderer
    from slidegen.serve import Preview

    def draw(self: FigureRenderer, name: str) -> tuple[Path, Path]:  # where the renderer would draw
        self.out_dir.mkdir(parents=True, exist_ok=True)
        svg, png = self.out_dir / f"{name}.svg", self.out_dir / f"{name}.png"
        svg.write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'/>")
        png.write_bytes(b"\x89PNG\r\n\x1a\n")
        return svg, png

    monkeypatch.setattr(FigureRenderer, "__call__", draw)
    project = make_fake_project(tmp_path / "proj")
    (project.decks_dir / "99-fake.md").write_text("# F\n\n![Curve](fig:ch99.curve)\n", encoding="utf-8")
    monkeypatch.chdir(project.root)
    with Preview(project, port=0, log=open(os.devnull, "w")) as running:  # noqa: SIM115
        drawn = sorted(p.name for p in (running.out / "figures").iterdir())
        assert "media/ch99.curve-" in (running.html_dir / "99-fake.html").read_text(encoding="utf-8")
    # drawn for its box on the slide (ch99.curve@WxH): issue 31
    assert [name.split("@")[0] + "." + name.rsplit(".", 1)[1] for name in drawn] == ["ch99.curve.png", "ch99.curve.svg"]
    assert not project.build_dir.exists()
