"""One tenant's slow calls do not stall the others (review finding): a key runs at most ``KEY_SHARE`` calls at
once in a server process, its others wait on the event loop holding no thread, and /readyz does not queue
behind the tenants' calls. Before, four slow calls of one key (a batch of long texts, and three more that
waited on the same scope's lock) held every thread of the pool, and another tenant's read and /readyz
waited until one of them ended."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from memsieve.aio import DEFAULT_MAX_WORKERS
from memsieve.server.app import KEY_SHARE
from serve_helper import ServeProcess, make_keys

WORDS = ("harbour lantern orchard violin granite meadow copper thistle ember quarry saddle beacon willow "
         "falcon juniper marble tundra cobalt prairie glacier").split()


def _long_texts(seed: int, n: int, chars: int = 1500) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < chars:
            words.append(rng.choice(WORDS))
        out.append(f"note {seed}-{i}: " + " ".join(words) + ".")
    return out


def test_the_key_share_leaves_threads_for_other_tenants():
    assert 1 <= KEY_SHARE < DEFAULT_MAX_WORKERS


def test_one_tenants_slow_calls_leave_the_others_answered(tmp_path):
    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"}, bob={"user_id": "bob"})
    with ServeProcess(tmp_path / "mem.db", tmp_path / "keys.json") as srv:
        with srv.client(keys["bob"]) as c:
            assert c.post("/v1/memories", json={"text": "Bob keeps bees", "user_id": "bob"}).status_code == 200
        done: dict[str, float] = {}
        lock = threading.Lock()

        def ana_batch(k: int) -> int:
            # One scope for all four: one runs, the others wait on its lock.
            with srv.client(keys["ana"], timeout=600.0) as c:
                status = c.post("/v1/memories/batch", json={"items": _long_texts(k, 40), "user_id": "ana"}
                                ).status_code
            with lock:
                done.setdefault("ana first", time.monotonic())
            return status

        with ThreadPoolExecutor(max_workers=DEFAULT_MAX_WORKERS) as pool:
            started = time.monotonic()
            batches = [pool.submit(ana_batch, k) for k in range(DEFAULT_MAX_WORKERS)]
            time.sleep(1.0)  # ana's calls are in the server by now
            with srv.client(keys["bob"], timeout=600.0) as c:
                got = c.get("/v1/memories", params={"user_id": "bob"})
                done["bob"] = time.monotonic()
                ready = httpx.get(srv.url + "/readyz", timeout=600.0)
                done["readyz"] = time.monotonic()
            assert [f.result() for f in batches] == [200] * DEFAULT_MAX_WORKERS
        assert got.status_code == 200 and [m["text"] for m in got.json()["memories"]] == ["Bob keeps bees"]
        assert ready.status_code == 200
        # Bob and the probe were answered while every one of ana's calls was still running or waiting.
        assert done["bob"] < done["ana first"], (done["bob"] - started, done["ana first"] - started)
        assert done["readyz"] < done["ana first"], (done["readyz"] - started, done["ana first"] - started)
