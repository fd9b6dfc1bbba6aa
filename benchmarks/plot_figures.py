"""Draw the recorded benchmark figures (benchmarks/figures.json) as PNGs for the
documentation site: ``python benchmarks/plot_figures.py`` (needs ``pip install
".[docs]"`` for matplotlib) writes docs/benchmarks/*.png. The PNGs are committed; run it
again after recording new figures."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "benchmarks" / "figures.json"
OUT = ROOT / "docs" / "benchmarks"


def loop_lag(data: dict[str, Any], ax: Any) -> None:
    cases = data["cases"]
    series = [k for k in data if isinstance(data[k], list) and k != "cases"]
    width = 0.8 / len(series)
    for i, name in enumerate(series):
        xs = [x + i * width for x in range(len(cases))]
        ax.bar(xs, data[name], width, label=name)
    ax.set_xticks([x + width * (len(series) - 1) / 2 for x in range(len(cases))], cases)
    ax.tick_params(axis="x", labelrotation=20)
    ax.set_yscale("log")
    ax.set_ylabel("event-loop lag p99 (ms, log)")
    ax.set_title("Loop lag while uploads run (TLS, 2 cores)")


def memory(data: dict[str, Any], ax: Any) -> None:
    for name, run in (
        ("upload_from_url", data["upload_from_url"]),
        ("upload_file", data["upload_file"]),
    ):
        ax.plot(run["size_mib"], run["peak_rss_mib"], marker="o", label=name)
    ax.set_xscale("log")
    ax.set_ylim(0, 80)
    ax.set_xlabel("file size (MiB, log)")
    ax.set_ylabel("client peak RSS (MiB)")
    ax.set_title("Memory against file size")


def pipelines(data: dict[str, Any], ax: Any) -> None:
    concurrency = data["concurrency"]
    for latency, run in data["latency_ms"].items():
        line = ax.plot(concurrency, run["vidapi"], marker="o", label=f"vidapi, {latency} ms")[0]
        color = line.get_color()
        ax.axhline(
            run["sdk sequential"], color=color, linestyle=":", label=f"SDK sequential, {latency} ms"
        )
        ax.axhline(
            run["sdk 16 threads"],
            color=color,
            linestyle="--",
            label=f"SDK 16 threads, {latency} ms",
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(concurrency, [str(c) for c in concurrency])
    ax.set_xlabel("BatchUploader concurrency")
    ax.set_ylabel("pipelines per second")
    ax.set_title("Pipelines per second, beside the official SDK")


def workers(data: dict[str, Any], ax: Any) -> None:
    for name in ("concurrency 8", "concurrency 2"):
        run = data[name]
        line = ax.plot(run["workers"], run["jobs_per_s"], marker="o", label=f"measured, {name}")[0]
        one = run["jobs_per_s"][0]
        ax.plot(
            run["workers"],
            [one * w for w in run["workers"]],
            linestyle=":",
            color=line.get_color(),
            label=f"linear, {name}",
        )
    ax.set_xlabel("vidapi worker processes")
    ax.set_ylabel("jobs per second")
    ax.set_title("Workers on one shared queue")


PLOTS = {"loop-lag": loop_lag, "memory": memory, "pipelines": pipelines, "workers": workers}
KEYS = {"loop-lag": "loop_lag", "memory": "memory", "pipelines": "pipelines", "workers": "workers"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the PNGs")
    args = parser.parse_args()
    figures = json.loads(FIGURES.read_text(encoding="utf-8"))
    args.out.mkdir(parents=True, exist_ok=True)
    for name, draw in PLOTS.items():
        fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
        draw(figures[KEYS[name]], ax)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
        fig.tight_layout()
        path = args.out / f"{name}.png"
        fig.savefig(path, metadata={"Software": None})
        plt.close(fig)
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main()
