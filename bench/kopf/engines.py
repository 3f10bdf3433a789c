# Python Kopf's equivalent of fixtures/operators/bench-engines.ts, for
# `npm run bench -- engines --command "$PY -m kopf run bench/kopf/engines.py --all-namespaces --standalone --quiet"`:
# per kopfexamples object one daemon awaiting its stop flag and one timer, plus an
# on-event handler that counts the objects (and, in the none variant, the baseline, keeps every
# object's newest body); the variant comes from BENCH_ENGINES (none, daemon, timer, timer60, both),
# the timer interval in seconds from BENCH_ENGINES_INTERVAL (default 1; the benchmark gives
# timer60 a 60 s interval), and the
# figures go to the JSON file at BENCH_ENGINES_STATS once a second and at exit, in the same format
# (without heapUsedAfterGc, which is Node's).
# All handlers are async: Kopf runs sync daemons and timers in threads.
import asyncio
import atexit
import json
import os
import time

import kopf

VARIANT = os.environ.get('BENCH_ENGINES', 'both')
STATS = os.environ.get('BENCH_ENGINES_STATS')
INTERVAL_S = float(os.environ.get('BENCH_ENGINES_INTERVAL', '1'))

counts = {'objectsSeen': 0, 'daemonsStarted': 0, 'daemonsExited': 0, 'lastDaemonExitAt': 0, 'timerCalls': 0}
due = {}        # uid -> when its timer is due next (tenths of a millisecond, monotonic)
lateness = {}   # lateness in tenths of a millisecond -> calls
tasks = set()


def tick():
    return round(time.monotonic() * 10_000)


def bucket(late):
    # exact below 100 ms, then three significant digits (as the Node fixture: bounded histogram)
    if late < 1000:
        return late
    step = 10 ** (len(str(late)) - 3)
    return round(late / step) * step


def write_stats():
    if not STATS:
        return
    text = json.dumps({'at': int(time.time() * 1000), 'variant': VARIANT, **counts, 'timerObjects': len(due),
                       'lateTenthsMs': {str(k): v for k, v in lateness.items()}})
    with open(STATS + '.tmp', 'w') as f:
        f.write(text)
    os.replace(STATS + '.tmp', STATS)


async def writer():
    while True:
        write_stats()
        await asyncio.sleep(1)


atexit.register(write_stats)


@kopf.on.startup()
async def start_writer(**_):
    task = asyncio.create_task(writer())
    tasks.add(task)


held = {}      # the none variant's copy of every object, by uid


@kopf.on.event('kopf.dev', 'v1', 'kopfexamples')
async def seen(type, uid, body, **_):
    if type is None or type == 'ADDED':
        counts['objectsSeen'] += 1
    if VARIANT != 'none':
        return
    if type == 'DELETED':
        held.pop(uid, None)
    else:
        held[uid] = body


if VARIANT in ('daemon', 'both'):
    @kopf.daemon('kopf.dev', 'v1', 'kopfexamples')
    async def idle(stopped, uid, **_):
        counts['daemonsStarted'] += 1
        try:
            await stopped.wait()
        finally:
            counts['daemonsExited'] += 1
            counts['lastDaemonExitAt'] = int(time.time() * 1000)
            due.pop(uid, None)


if VARIANT in ('timer', 'timer60', 'both'):
    @kopf.timer('kopf.dev', 'v1', 'kopfexamples', interval=INTERVAL_S)
    async def beat(uid, **_):
        now = tick()
        expected = due.get(uid)
        if expected is not None:
            late = bucket(now - expected)
            lateness[late] = lateness.get(late, 0) + 1
        counts['timerCalls'] += 1
        due[uid] = tick() + round(INTERVAL_S * 10_000)
