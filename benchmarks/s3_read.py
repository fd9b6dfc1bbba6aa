"""Reading an object from an S3-compatible store: aiobotocore beside obstore (issue 42).

    python benchmarks/s3_read.py [--size-mib 256] [--rounds 3]

moto's server (``python -m moto.server``, its own process on 127.0.0.1) holds one object
of ``--size-mib`` MiB of random bytes. Each contender runs in a fresh child process that
GETs the whole object ``n`` times, streamed 1 MiB at a time and discarded, and prints its
wall time and its own CPU time (user + system, ``getrusage``). The parent runs each child
under ``perf stat -e instructions:u`` with n = 1 and n = 3: the marginal count
(I(3) - I(1)) / 2 is the instructions one whole read costs, without the start-up
(imports, the SDK's data files) that differs between the two. Rounds alternate A B A B.

The server is the same for both, and it is the bottleneck (moto is Python): throughput
says little between the two clients; CPU per GiB and instructions per GiB are the
client's own cost. The child also reports whether the library found moto from
``AWS_ENDPOINT_URL`` alone (the standard chain's variable), with no endpoint passed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

MiB = 1024 * 1024
BUCKET, KEY = "bench", "object.mp4"


async def read_aiobotocore(n: int, explicit: bool) -> int:
    from aiobotocore.session import get_session

    kwargs = {"endpoint_url": os.environ["AWS_ENDPOINT_URL"]} if explicit else {}
    total = 0
    async with get_session().create_client("s3", **kwargs) as s3:
        for _ in range(n):
            answer = await s3.get_object(Bucket=BUCKET, Key=KEY)
            body = answer["Body"]
            while chunk := await body.read(MiB):
                total += len(chunk)
            body.close()
    return total


async def read_obstore(n: int, explicit: bool) -> int:
    import obstore
    from obstore.store import S3Store

    if explicit:
        store = S3Store(
            BUCKET,
            endpoint=os.environ["AWS_ENDPOINT_URL"],
            region=os.environ["AWS_DEFAULT_REGION"],
            access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
            secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
            client_options={"allow_http": True},
        )
    else:
        store = S3Store.from_url(f"s3://{BUCKET}", client_options={"allow_http": True})
    total = 0
    for _ in range(n):
        answer = await obstore.get_async(store, KEY)
        async for chunk in answer.stream(min_chunk_size=MiB):
            total += len(chunk)
    return total


def child(lib: str, n: int, mode: str) -> None:
    reader = {"aiobotocore": read_aiobotocore, "obstore": read_obstore}[lib]
    if mode == "chain":  # only AWS_ENDPOINT_URL and the keys in the environment
        try:
            got = asyncio.run(asyncio.wait_for(reader(1, explicit=False), 20))
            print(json.dumps({"chain": got > 0}))
        except Exception as exc:
            print(json.dumps({"chain": False, "why": type(exc).__name__}))
        return
    started = time.perf_counter()
    got = asyncio.run(reader(n, explicit=True))
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"bytes": got, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime}))


def measure(lib: str, n: int, env: dict[str, str], counter: str) -> dict[str, float]:
    """One child: its numbers, and its instructions counted by ``counter``."""
    out_file = f"/tmp/s3_read.{os.getpid()}.{lib}.{n}.callgrind"
    prefix = {
        "perf": ["perf", "stat", "-x,", "-e", "instructions:u"],
        "callgrind": ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"],
        "none": [],
    }[counter]
    proc = subprocess.run(
        [*prefix, sys.executable, __file__, "--child", lib, str(n)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    out: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["instructions"] = float("nan")
    if counter == "perf":
        line = next(x for x in proc.stderr.splitlines() if "instructions" in x)
        out["instructions"] = float(line.split(",")[0])  # '<not supported>' in some VMs
    elif counter == "callgrind":
        with open(out_file) as f:
            totals = [x for x in f if x.startswith(("totals:", "summary:"))]
        os.unlink(out_file)
        out["instructions"] = float(totals[-1].split()[1])
    return out


def main() -> None:
    from tests.s3_store import KEY_ID, SECRET, moto_server, store_env

    p = argparse.ArgumentParser()
    p.add_argument("--size-mib", type=int, default=256)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument(
        "--counter",
        choices=("perf", "callgrind", "none"),
        default="perf",
        help="how instructions are counted (callgrind: where perf cannot count them; "
        "slow, and its wall and CPU times are not the library's)",
    )
    args = p.parse_args()
    size = args.size_mib * MiB
    with moto_server() as url:
        import boto3

        env = {**os.environ, **store_env(url)}
        s3 = boto3.client(
            "s3",
            endpoint_url=url,
            aws_access_key_id=KEY_ID,
            aws_secret_access_key=SECRET,
            region_name="us-east-1",
        )
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key=KEY, Body=os.urandom(size))
        s3.close()
        libs = ("aiobotocore", "obstore")
        # the keys in a shared credentials file under a profile, not in the environment
        creds = f"/tmp/s3_read.{os.getpid()}.credentials"
        with open(creds, "w") as f:
            f.write(f"[bench]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n")
        by_profile = {k: v for k, v in env.items() if not k.startswith("AWS_ACCESS_KEY_ID")}
        by_profile.pop("AWS_SECRET_ACCESS_KEY")
        by_profile.update(AWS_SHARED_CREDENTIALS_FILE=creds, AWS_PROFILE="bench")
        for lib in libs:
            for what, child_env in (
                ("AWS_ENDPOINT_URL and keys in the environment", env),
                ("AWS_ENDPOINT_URL, AWS_PROFILE and a shared credentials file", by_profile),
            ):
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", lib, "1", "chain"],
                    env=child_env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                print(f"{lib}: reads the object from {what} alone: {proc.stdout.strip()}")
            proc = subprocess.run(
                [sys.executable, __file__, "--child", lib, "1", "read", "exit"],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            print(f"{lib}: exit status of a process after one streamed read: {proc.returncode}")
        os.unlink(creds)
        rows: dict[str, list[dict[str, float]]] = {lib: [] for lib in libs}
        for _ in range(args.rounds):
            for lib in libs:
                one = measure(lib, 1, env, args.counter)
                three = measure(lib, 3, env, args.counter)
                gib = 2 * size / 1024**3
                rows[lib].append(
                    {
                        "MiB/s": 3 * size / MiB / three["wall"],
                        "cpu s/GiB": (three["cpu"] - one["cpu"]) / gib,
                        "Ginstr/GiB": (three["instructions"] - one["instructions"]) / gib / 1e9,
                        "start Ginstr": (
                            one["instructions"] - (three["instructions"] - one["instructions"]) / 2
                        )
                        / 1e9,
                    }
                )
                row = ", ".join(f"{k} {v:.2f}" for k, v in rows[lib][-1].items())
                print(f"round {len(rows[lib])}: {lib:12} {row}", flush=True)
    print(f"load average after: {os.getloadavg()}")
    print(f"object {args.size_mib} MiB, {args.rounds} rounds (min-median-max)")
    for lib, got in rows.items():
        cells = []
        for name in got[0]:
            values = sorted(r[name] for r in got)
            cells.append(f"{name} {values[0]:.2f}-{statistics.median(values):.2f}-{values[-1]:.2f}")
        print(f"{lib:12} " + ", ".join(cells))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "read")
        if sys.argv[-1] == "exit":
            sys.exit(0)  # the interpreter's own exit, its handlers run
        # obstore 0.12.1 aborts (SIGABRT) at the interpreter's exit after a streamed read
        # (its runtime's shutdown): both children leave without the exit handlers
        sys.stdout.flush()
        os._exit(0)
    else:
        main()
