# Python Kopf's equivalent of fixtures/operators/chaos.ts, for
# `npm run bench -- chaos --command "$PY -m kopf run bench/kopf/chaos.py --all-namespaces --standalone"`:
# two create handlers, an update and a delete handler on kopfexamples.kopf.dev/v1, each appending one
# line to the run ledger named by CHAOS_LEDGER as it starts
# ({"handler": ..., "uid": ..., "name": ..., "pid": ..., "at": <epoch ms>}) with a single write on a
# file opened for appending, so a SIGKILL cannot leave half a line. The create and update handlers
# return {"field": <spec.field as seen>}, which Kopf stores in status.<handler id>.
# All handlers are async: Kopf runs sync handlers in threads.
import json
import os
import time

import kopf

LEDGER = os.environ['CHAOS_LEDGER']


def record(handler, body):
    meta = body.get('metadata', {})
    line = json.dumps({'handler': handler, 'uid': meta.get('uid'), 'name': meta.get('name'),
                       'pid': os.getpid(), 'at': int(time.time() * 1000)}, separators=(',', ':')) + '\n'
    fd = os.open(LEDGER, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode('utf-8'))
    finally:
        os.close(fd)


@kopf.on.create('kopf.dev', 'v1', 'kopfexamples')
async def create_a(body, **_):
    record('create_a', body)
    return {'field': body.get('spec', {}).get('field')}


@kopf.on.create('kopf.dev', 'v1', 'kopfexamples')
async def create_b(body, **_):
    record('create_b', body)
    return {'field': body.get('spec', {}).get('field')}


@kopf.on.update('kopf.dev', 'v1', 'kopfexamples')
async def update_fn(body, **_):
    record('update_fn', body)
    return {'field': body.get('spec', {}).get('field')}


@kopf.on.delete('kopf.dev', 'v1', 'kopfexamples')
async def delete_fn(body, **_):
    record('delete_fn', body)
