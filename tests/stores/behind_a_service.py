"""A correct store behind a small HTTP service, as agent-memory-server's client is: the store speaks HTTP
to the service at MEMORY_SERVICE_URL, and the service keeps each session in a Redis list of its own
server (RPUSH and LTRIM in one MULTI/EXEC, EXPIRE), never the server the suite gives the store. The
store takes ``**options`` (the suite's client and URL among them) and uses none of them.

``python -m tests.stores.behind_a_service PORT REDIS_URL [SUMMARISE_AFTER]`` serves on 127.0.0.1:PORT until it
is killed. With SUMMARISE_AFTER, the service stands for agent-memory-server with no model credentials: an append
to a session that holds that many messages calls its summariser, which fails, and the service answers HTTP 500
(another component's failure, which the store raises as urllib's HTTPError)."""

import json
import os
import sys
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import redis as redis_py

TIMEOUT_S = 10


class ServiceStore:
    def __init__(self, namespace, max_messages, ttl, **options):
        self.base = os.environ["MEMORY_SERVICE_URL"]
        self.namespace, self.max_messages, self.ttl = namespace, max_messages, ttl

    def _url(self, session_id):
        query = urllib.parse.urlencode({"max": self.max_messages, "ttl": self.ttl})
        return f"{self.base}/{urllib.parse.quote(self.namespace + session_id, safe='')}?{query}"

    def _call(self, method, session_id, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self._url(session_id), data=data, method=method)
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            return json.loads(answer.read() or b"null")

    def append(self, session_id, role, content):
        self._call("POST", session_id, {"role": role, "content": content})

    def load(self, session_id):
        return self._call("GET", session_id)

    def clear(self, session_id):
        self._call("DELETE", session_id)


def handler(client, summarise_after=None):
    class Sessions(BaseHTTPRequestHandler):
        def _target(self):
            path, _, query = self.path.partition("?")
            options = dict(urllib.parse.parse_qsl(query))
            return urllib.parse.unquote(path.lstrip("/")), int(options.get("max", 0)), int(options.get("ttl", 0))

        def _answer(self, value):
            body = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            key, window, ttl = self._target()
            message = self.rfile.read(int(self.headers["Content-Length"]))
            if summarise_after is not None and client.llen(key) >= summarise_after:
                self.send_error(500, "Internal Server Error", "the summariser failed: no model credentials")
                return
            with client.pipeline() as pipe:
                pipe.rpush(key, message).ltrim(key, -window, -1).expire(key, ttl).execute()
            self._answer(None)

        def do_GET(self):
            key, _, _ = self._target()
            self._answer([json.loads(raw) for raw in client.lrange(key, 0, -1)])

        def do_DELETE(self):
            client.delete(self._target()[0])
            self._answer(None)

        def log_message(self, *args):
            pass
    return Sessions


if __name__ == "__main__":
    port, redis_url = int(sys.argv[1]), sys.argv[2]
    summarise_after = int(sys.argv[3]) if len(sys.argv) > 3 else None
    ThreadingHTTPServer(("127.0.0.1", port),
                        handler(redis_py.Redis.from_url(redis_url), summarise_after)).serve_forever()
