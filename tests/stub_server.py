#!/usr/bin/python3
"""stub_server.py - a scripted stand-in for the leaderboard's submission endpoint, for the
client's tests only (tests/submit_cli.sh) until tilebench-server exists: it listens on
127.0.0.1 (port 0: the kernel picks; the port is written to PORTFILE), answers POSTs with the
statuses of SCRIPT in turn (e.g. "503,503,201"; the last repeats), logs every request's
headers and body length as one JSON line to LOG, and stops after its requests or 30 s.
   stub_server.py PORTFILE LOG SCRIPT [CERT KEY]   (with CERT and KEY: https)"""
import http.server, json, ssl, sys, threading

portfile, log, script = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
answers = iter(script)
last = [script[-1]]

class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        with open(log, "a") as f:
            f.write(json.dumps({"path": self.path, "auth": self.headers.get("Authorization"),
                                "key": self.headers.get("Idempotency-Key"), "bytes": len(body),
                                "valid_json": _json_ok(body)}) + "\n")
        code = int(next(answers, last[0]))
        payload = {"id": 7} if code < 300 else {"error": "row 3: 9999 TFLOP/s is above the GPU's peak \x1b[31m"}
        out = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
    def log_message(self, *a):
        pass

def _json_ok(b):
    try:
        json.loads(b); return True
    except Exception:
        return False

srv = http.server.HTTPServer(("127.0.0.1", 0), H)
if len(sys.argv) >= 6:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[4], sys.argv[5])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(portfile, "w").write(str(srv.server_address[1]))
threading.Timer(30, srv.shutdown).start()
srv.serve_forever()
