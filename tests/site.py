"""The fixture site: a tiny loopback HTTP server with the pages the integration tests need."""

from __future__ import annotations

import threading
import time
from collections import Counter
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PAGES = {
    "/": """<title>Fixture Home</title>
<h1>Home</h1>
<button id="rename" onclick="document.title='Renamed'">Rename</button>
<a id="next" href="/page2">Next page</a>
<input aria-label="Name" id="name">""",
    "/page2": "<title>Page Two</title><h1>Second</h1><a href='/'>Home</a>",
    "/form": """<title>Search form</title>
<form action="/submitted"><input aria-label="Query" name="q" id="q"><button>Search</button></form>""",
    "/nested": """<title>Nested</title><main><h1>Top</h1><section><nav><ul>
<li><a href="/">Deep link</a></li></ul></nav></section></main>""",
    "/later": """<title>Later</title><div id="msg">Loading...</div>
<script>setTimeout(() => { document.getElementById('msg').textContent = 'Ready now'; }, 300)</script>""",
}


class FixtureSite:
    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                site.route(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def route(self, req: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(req.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.hits[parts.path] += 1
        headers: dict[str, str] = {}
        if parts.path in PAGES:
            body = PAGES[parts.path]
        elif parts.path == "/set-cookie":
            headers["Set-Cookie"] = f"{query['name']}={query['value']}; Path=/"
            body = f"<title>cookie set</title>{query['name']}"
        elif parts.path == "/cookies":
            jar = SimpleCookie(req.headers.get("Cookie", ""))
            names = ",".join(sorted(jar)) or "none"
            body = f"<title>cookies: {names}</title><pre id='c'>{names}</pre>"
        elif parts.path == "/submitted":
            body = f"<title>Results for {query.get('q', '')}</title><p>found</p>"
        elif parts.path.startswith("/hit/"):
            time.sleep(float(query.get("s", "0")))
            body = f"<title>hit {self.hits[parts.path]}</title>counted"
        elif parts.path == "/slow":
            time.sleep(float(query.get("s", "1")))
            body = "<title>Slow</title>done"
        else:
            req.send_error(404)
            return
        req.send_response(200)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        for k, v in headers.items():
            req.send_header(k, v)
        req.end_headers()
        req.wfile.write(body.encode())

    def close(self) -> None:
        self.server.shutdown()
