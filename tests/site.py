"""The fixture site: a tiny loopback HTTP server with the pages the integration tests need."""

from __future__ import annotations

import json
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
    "/widgets": """<title>Widgets</title>
<label><input type="checkbox" id="agree"> I agree</label>
<label><input type="radio" name="size" value="s" id="small"> Small</label>
<label><input type="radio" name="size" value="l" id="large"> Large</label>
<label>Colour <select id="colour"><option value="r">Red</option><option value="g">Green</option>
<option value="b">Blue</option></select></label>
<label>Volume <input type="range" id="volume" min="0" max="10" value="2"></label>
<label>Email <input type="text" id="email"></label>
<div id="hoverme" onmouseenter="this.textContent='hovered'">hover target</div>
<div id="item" draggable="true" ondragstart="event.dataTransfer.setData('text', 'item')">Drag me</div>
<div id="zone" style="width:200px;height:80px;border:1px solid"
  ondragover="event.preventDefault()" ondrop="event.preventDefault(); this.textContent='dropped'">Drop here</div>
<button id="alert" onclick="alert('hello alert'); document.getElementById('out').textContent='after alert'">Alert</button>
<button id="confirm" onclick="document.getElementById('out').textContent = confirm('sure?') ? 'yes' : 'no'">Confirm</button>
<button id="prompt" onclick="document.getElementById('out').textContent = 'name=' + prompt('name?')">Prompt</button>
<button id="popup" onclick="window.open('/page2')">Popup</button>
<button id="popups" onclick="for (let i = 0; i < 8; i++) window.open('/page2?n=' + i)">Many popups</button>
<div id="out"></div>
<div id="clicker" ondblclick="this.dataset.dbl='yes'" onclick="this.dataset.shift=event.shiftKey"
  oncontextmenu="event.preventDefault(); this.dataset.right='yes'">Click zone</div>
<div id="pad" style="position:absolute;left:300px;top:300px;width:50px;height:50px;background:#ccc"
  onclick="this.textContent='xy-clicked'"></div>
<script>
console.log('hello log'); console.warn('careful'); console.error('broken thing');
fetch('/api/data').then(r => r.json()).then(d => { window.apiData = d; });
</script>""",
    "/upload": """<title>Upload</title>
<input type="file" id="file" onchange="send(this.files[0])">
<button id="choose" onclick="document.getElementById('file').click()">Choose file</button>
<div id="status"></div>
<script>
async function send(f) {
  const r = await fetch('/receive?name=' + encodeURIComponent(f.name), {method: 'POST', body: f});
  document.getElementById('status').textContent = 'sent ' + f.name + ' ' + r.status;
}
</script>""",
    "/later": """<title>Later</title><div id="msg">Loading...</div>
<script>setTimeout(() => { document.getElementById('msg').textContent = 'Ready now'; }, 300)</script>""",
}


class FixtureSite:
    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.received: dict[str, bytes] = {}
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                site.route(self)

            def do_POST(self) -> None:  # noqa: N802
                site.receive(self)

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
        elif parts.path == "/redirect":
            req.send_response(302)
            req.send_header("Location", query["to"])
            req.send_header("Content-Length", "0")
            req.end_headers()
            return
        elif parts.path == "/opener":
            to = json.dumps(query["to"])
            body = (f"<title>Opener</title><button id='open' onclick='window.open({to})'>Open</button>"
                    f"<button id='jump' onclick='location.href = {to}'>Jump</button>")
        elif parts.path == "/submitted":
            body = f"<title>Results for {query.get('q', '')}</title><p>found</p>"
        elif parts.path == "/api/data":
            headers["Content-Type"] = "application/json"
            body = '{"items": [1, 2, 3]}'
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
        if "Content-Type" not in headers:
            req.send_header("Content-Type", "text/html; charset=utf-8")
        for k, v in headers.items():
            req.send_header(k, v)
        req.end_headers()
        req.wfile.write(body.encode())

    def receive(self, req: BaseHTTPRequestHandler) -> None:
        """POST /receive?name=...: keep the uploaded bytes under that name."""
        parts = urlsplit(req.path)
        name = parse_qs(parts.query).get("name", ["?"])[0]
        length = int(req.headers.get("Content-Length", "0"))
        self.received[name] = req.rfile.read(length)
        req.send_response(200)
        req.send_header("Content-Length", "0")
        req.end_headers()

    def close(self) -> None:
        self.server.shutdown()
