"""The replay API server (target/release/replay-server, the tests' server) as the
bench runs it: one snapshot served on plain http or over TLS, and what is
read from it once (the pages as served, the offline checker's text on them)."""

import os
import subprocess
import time

from common import SERVER

TOKEN = "bench-token"
PLUGIN_MS = 300


class Server:
    """A replay-server process serving one snapshot; writes its kubeconfig."""

    def __init__(self, pods_file, events_file, kubeconfig, tls_exec=False):
        argv = [SERVER, "--state", f"{pods_file},{events_file}", "--now", "2025-01-01T12:00:00Z",
                "--kubeconfig", kubeconfig]
        if tls_exec:
            argv += ["--tls", "--token", TOKEN, "--exec-plugin-ms", str(PLUGIN_MS)]
        started = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.url = self.proc.stdout.readline().strip()
        if not self.url:
            raise RuntimeError(f"replay-server did not start: {' '.join(argv)}")
        self.load_seconds = time.perf_counter() - started
        self.kubeconfig = kubeconfig

    def rss(self):
        """(VmRSS, VmHWM) in bytes."""
        values = {}
        with open(f"/proc/{self.proc.pid}/status", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    values[key] = int(value.split()[0]) * 1024
        return values["VmRSS"], values["VmHWM"]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def token_kubeconfig(exec_kubeconfig, path):
    """The exec kubeconfig with a static token instead of the plugin (same server, same TLS)."""
    with open(exec_kubeconfig, encoding="utf-8") as f:
        text = f.read()
    head = text[: text.index("    exec:")]
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + f"    token: {TOKEN}\n")
    return path


def served_text(checker, pages, events_file):
    """The offline checker's text on the pages as the server served them: what a
    raw driver prints live (it names the served resourceVersion; a -o json List
    has none)."""
    return subprocess.run([checker, "check", "--snapshot", pages, "--events", events_file],
                          capture_output=True, env=dict(os.environ, NO_COLOR="1")).stdout


def download_pages(kubeconfig, base_env, path):
    """The pods list as the generated bash reads it by default (one `kubectl get
    --raw` request), into path: the input of the jq-pass contender."""
    with open(path, "wb") as out:
        subprocess.run(["kubectl", "get", "--raw", "/api/v1/pods"], env=dict(base_env, KUBECONFIG=kubeconfig),
                       stdout=out, check=True)
    return path
