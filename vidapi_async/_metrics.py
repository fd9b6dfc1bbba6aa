"""The metrics kept for a Prometheus endpoint, and the endpoint itself.

No dependency: a small registry (counters, up-down counters, histograms with fixed
buckets) fed by ``_observe.Observer`` while ``REGISTRY.on``, rendered in the Prometheus
text exposition format (0.0.4) by a threaded HTTP server bound to 127.0.0.1 by default.
"""

from __future__ import annotations

import http.server
import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Final

__all__ = ["REGISTRY", "MetricsServer", "Registry"]

KINDS: Final = {
    # name: (Prometheus type, Prometheus unit suffix, OpenTelemetry unit, description);
    # the one list of the client's metrics: ``_observe`` makes its instruments from it.
    "http.client.request.duration": ("histogram", "seconds", "s", "HTTP request time"),
    "http.client.request.body.size": ("histogram", "bytes", "By", "HTTP request body sizes"),
    "vidapi.upload.bytes": ("counter", "bytes", "By", "bytes of files uploaded"),
    "vidapi.retries": ("counter", "", "{retry}", "requests tried again, by reason"),
    "vidapi.jobs": ("counter", "", "{job}", "batch jobs finished, by outcome"),
    "vidapi.job.duration": ("histogram", "seconds", "s", "time a batch job took"),
    "vidapi.quota.refusals": ("counter", "", "{refusal}", "the platform's quota refusals"),
    "vidapi.jobs.in_flight": ("gauge", "", "{job}", "batch jobs running"),
    "vidapi.queue.jobs": ("gauge", "", "{job}", "a shared queue's jobs, by state"),
}
SECONDS_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
BYTES_BUCKETS: Final = tuple(float(4**n) for n in range(4, 18))

Labels = tuple[tuple[str, str], ...]


class Registry:
    """Values by metric and label set; ``on`` while at least one endpoint serves them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self.on = False
        self.generation = 0
        """Counts up each time a first endpoint starts the values from zero."""
        self._sums: dict[tuple[str, Labels], float] = {}
        self._hist: dict[tuple[str, Labels], list[float]] = {}

    def start(self) -> None:
        with self._lock:
            if self._users == 0:  # a new endpoint starts from zero, as a new process does
                self.generation += 1
                self._sums.clear()
                self._hist.clear()
                self._sums[("vidapi.jobs.in_flight", ())] = 0.0  # 0 from the start
            self._users += 1
            self.on = True

    def stop(self) -> None:
        with self._lock:
            self._users -= 1
            self.on = self._users > 0

    @staticmethod
    def _labels(labels: Mapping[str, object]) -> Labels:
        return tuple(sorted((k, str(v)) for k, v in labels.items()))

    def add(self, name: str, value: float, labels: Mapping[str, object]) -> None:
        key = (name, self._labels(labels))
        with self._lock:
            self._sums[key] = self._sums.get(key, 0.0) + value

    def set(self, name: str, value: float, labels: Mapping[str, object]) -> None:
        """A gauge's value now (not added to the last)."""
        key = (name, self._labels(labels))
        with self._lock:
            self._sums[key] = value

    def observe(self, name: str, value: float, labels: Mapping[str, object]) -> None:
        bounds = buckets(name)
        key = (name, self._labels(labels))
        with self._lock:
            counts = self._hist.setdefault(key, [0.0] * (len(bounds) + 2))
            for i, bound in enumerate(bounds):
                if value <= bound:
                    counts[i] += 1
            counts[-2] += value
            counts[-1] += 1

    def render(self) -> str:
        """The Prometheus text format of every value kept."""
        with self._lock:
            sums = dict(self._sums)
            hist = {k: list(v) for k, v in self._hist.items()}
        lines: list[str] = []
        for name, (kind, unit, _, help_text) in KINDS.items():
            base = name.replace(".", "_")
            if unit and not base.endswith(f"_{unit}"):
                base += f"_{unit}"
            if kind == "histogram":
                rows = [(labels, v) for (n, labels), v in hist.items() if n == name]
                lines += [f"# HELP {base} {help_text}", f"# TYPE {base} histogram"]
                for labels, counts in sorted(rows):
                    for bound, count in zip(buckets(name), counts, strict=False):
                        lines.append(f"{base}_bucket{_fmt(labels, le=_num(bound))} {_num(count)}")
                    lines.append(f"{base}_bucket{_fmt(labels, le='+Inf')} {_num(counts[-1])}")
                    lines.append(f"{base}_sum{_fmt(labels)} {_num(counts[-2])}")
                    lines.append(f"{base}_count{_fmt(labels)} {_num(counts[-1])}")
                continue
            values = sorted((labels, v) for (n, labels), v in sums.items() if n == name)
            # a counter's samples, HELP and TYPE all say ``_total`` (as the Prometheus
            # client writes them): TYPE without it leaves the samples untyped to a parser
            base += "_total" if kind == "counter" else ""
            lines += [f"# HELP {base} {help_text}", f"# TYPE {base} {kind}"]
            for labels, value in values:
                lines.append(f"{base}{_fmt(labels)} {_num(value)}")
        return "\n".join(lines) + "\n"


def buckets(name: str) -> tuple[float, ...]:
    """A histogram's bucket bounds: seconds or bytes, by its unit."""
    return BYTES_BUCKETS if KINDS[name][1] == "bytes" else SECONDS_BUCKETS


def _num(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _fmt(labels: Iterable[tuple[str, str]], **more: str) -> str:
    pairs = [(k.replace(".", "_"), v) for k, v in labels] + list(more.items())
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


REGISTRY: Final = Registry()


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.split("?")[0] != "/metrics":
            self.send_error(404)
            return
        body = REGISTRY.render().encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    timeout = 30  # an idle connection's thread ends after this many seconds

    def log_message(self, format: str, *args: object) -> None:
        pass  # a scrape every few seconds is not worth a line


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # A scraper that hung up (Prometheus closes a scrape that timed out): a DEBUG
        # line, never a traceback on stderr
        logging.getLogger("vidapi_async").debug(
            "metrics endpoint: a scrape from %s ended early", client_address, exc_info=True
        )


class MetricsServer:
    """``/metrics`` in the Prometheus text format on ``host:port`` (port 0: any free
    one; ``port`` says which) from a thread of its own, until ``close``."""

    def __init__(self, port: int, host: str = "127.0.0.1") -> None:
        self._server = _Server((host, port), _Handler)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},  # how long ``close`` may wait
            name="vidapi-metrics",
            daemon=True,
        )
        REGISTRY.start()
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        REGISTRY.stop()
