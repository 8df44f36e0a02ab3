import { once } from 'node:events';
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import { rawSocket } from '../support/raw-socket.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function started(): Promise<{ h: Harness; server: RunningServer }> {
  const h = createHarness();
  const server = await serve(h);
  cleanups.push(() => server.close(0));
  return { h, server };
}

interface Answer {
  status: number;
  body: { detail?: string; status?: string };
}

/** A POST on a real socket, the body written in the chunks given (chunked transfer unless a Content-Length is set). */
async function post(
  server: RunningServer,
  headers: Record<string, string>,
  chunks: (string | Buffer)[],
): Promise<Answer> {
  const req = request({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/v1/events', headers });
  const answered = once(req, 'response');
  for (const chunk of chunks) req.write(chunk);
  req.end();
  const [res] = (await answered) as [import('node:http').IncomingMessage];
  let text = '';
  for await (const part of res) text += String(part);
  return { status: res.statusCode!, body: JSON.parse(text) as Answer['body'] };
}

const event = (sessionId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ session_id: sessionId, event: 'screen_view', screen: 'pan_details', ...extra });

describe('request bodies: the direct JSON path and body-parser', () => {
  it('reads a body that arrives in many chunks without a Content-Length', async () => {
    const { h, server } = await started();
    const text = event('chunked', { filler: 'n'.repeat(20_000), client_id: 'at_the_end' });
    const chunks = text.match(/[\s\S]{1,997}/g)!;
    const res = await post(server, { 'Content-Type': 'application/json' }, chunks);
    expect(res.status).toBe(200);
    expect(chunks.length).toBeGreaterThan(20);
    // The last field arrived: the body was read to its end, not cut at a chunk.
    expect(((await h.http.get('/api/sessions/chunked')).body as { client_id: string }).client_id).toBe('at_the_end');
  });

  it('refuses a chunked body past 64 KiB with 413, ingests nothing, and keeps serving', async () => {
    const { h, server } = await started();
    const piece = 'x'.repeat(8 * 1024);
    const res = await post(server, { 'Content-Type': 'application/json' }, [
      `{"session_id":"big","event":"identity","blob":"`,
      ...Array.from({ length: 9 }, () => piece),
      '"}',
    ]);
    expect(res).toEqual({ status: 413, body: { detail: 'request body exceeds 64 KiB' } });
    expect(h.system.sessionHost.has('big')).toBe(false);
    expect((await post(server, { 'Content-Type': 'application/json' }, [event('after')])).status).toBe(200);
  });

  it('refuses a declared Content-Length past 64 KiB before reading the body', async () => {
    const { h, server } = await started();
    const { socket, text, closed } = rawSocket(server.port, cleanups);
    // Only the headers are sent: the answer cannot have waited for a body.
    socket.write(
      'POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: ' +
        'application/json\r\nContent-Length: 70000\r\nConnection: ' +
        'close\r\n\r\n{"session_id":"declared"',
    );
    socket.end();
    await closed;
    expect(text()).toMatch(/^HTTP\/1\.1 413 /);
    expect(text()).toContain('{"detail":"request body exceeds 64 KiB"}');
    expect(h.system.sessionHost.has('declared')).toBe(false);
  });

  it('refuses a lone surrogate in a value or a key with 422 naming where, on both paths, and keeps a whole pair', async () => {
    const { h, server } = await started();
    // What SQLite would keep as U+FFFD: a hint under such a component id would be lost at a restart.
    const value = '{"session_id":"lone","event":"component_input","component_id":"pan\\ud800","hint":"one"}';
    const key = '{"session_id":"lone","event":"identity","properties":{"k\\udc00":1}}';
    for (const headers of [
      { 'Content-Type': 'application/json' },
      { 'Content-Type': 'application/json; charset="utf-8"' },
    ]) {
      const onValue = await post(server, headers, [value]);
      expect(onValue.status).toBe(422);
      expect(onValue.body.detail).toMatch(/^body\.component_id: holds a lone surrogate/);
      const onKey = await post(server, headers, [key]);
      expect(onKey.status).toBe(422);
      expect(onKey.body.detail).toMatch(/^body\.properties\.k\uFFFD: holds a lone surrogate/);
    }
    expect(h.system.sessionHost.has('lone')).toBe(false);
    const pair = await post(server, { 'Content-Type': 'application/json' }, [
      '{"session_id":"pair","event":"identity","properties":{"note":"\\ud83d\\ude00"}}',
    ]);
    expect(pair.status).toBe(200);
    expect(
      ((await h.http.get('/api/sessions/pair')).body as { latest_event: { properties: { note: string } } }).latest_event
        .properties.note,
    ).toBe('\u{1F600}');
  });

  it('survives a client that drops the connection mid-body, and ingests nothing from it', async () => {
    const { h, server } = await started();
    const { socket, closed } = rawSocket(server.port, cleanups);
    socket.write(
      'POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"session_id":"dropped","event":"identity"',
    );
    socket.destroy();
    await closed;
    expect((await post(server, { 'Content-Type': 'application/json' }, [event('next')])).status).toBe(200);
    expect(h.system.sessionHost.has('dropped')).toBe(false);
  });

  it('takes the Content-Type variants SDKs send, and answers malformed JSON 400 on either path', async () => {
    const { server } = await started();
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'Application/JSON',
      'application/json; charset="utf-8"',
    ]) {
      expect((await post(server, { 'Content-Type': type }, [event('types')])).status, type).toBe(200);
      expect(await post(server, { 'Content-Type': type }, ['{"session_id":'])).toEqual({
        status: 400,
        body: { detail: 'malformed JSON body' },
      });
    }
  });

  it('still reads a gzip-compressed body, and refuses other charsets and encodings as before', async () => {
    const { h, server } = await started();
    const gzipped = await post(server, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, [
      gzipSync(event('zipped')),
    ]);
    expect(gzipped.status).toBe(200);
    expect(h.system.sessionHost.has('zipped')).toBe(true);
    // 64 KiB is the inflated size: a small compressed body cannot smuggle a large one in.
    const bomb = gzipSync(event('bomb', { filler: ' '.repeat(200_000) }));
    expect(bomb.length).toBeLessThan(2_000);
    expect(await post(server, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, [bomb])).toEqual({
      status: 413,
      body: { detail: 'request body exceeds 64 KiB' },
    });
    expect(await post(server, { 'Content-Type': 'application/json; charset=latin1' }, [event('latin')])).toEqual({
      status: 415,
      body: { detail: 'unsupported charset; send UTF-8 JSON' },
    });
    expect(
      await post(server, { 'Content-Type': 'application/json', 'Content-Encoding': 'zstd-unknown' }, [event('odd')]),
    ).toEqual({ status: 415, body: { detail: 'unsupported Content-Encoding' } });
    expect(await post(server, { 'Content-Type': 'text/plain' }, [event('text')])).toEqual({
      status: 415,
      body: { detail: 'Content-Type must be application/json' },
    });
    expect(['bomb', 'latin', 'odd', 'text'].filter((id) => h.system.sessionHost.has(id))).toEqual([]);
  });

  it('refuses UTF-16 and UTF-32 bodies 415 (body-parser would decode them), and names a body that is not what its Content-Encoding says', async () => {
    const { h, server } = await started();
    for (const charset of ['utf-16le', 'UTF-16', '"utf-32"']) {
      const body = Buffer.from(event(`wide-${charset}`), charset.includes('16') ? 'utf16le' : 'utf8');
      expect(await post(server, { 'Content-Type': `application/json; charset=${charset}` }, [body]), charset).toEqual({
        status: 415,
        body: { detail: 'unsupported charset; send UTF-8 JSON' },
      });
    }
    for (const encoding of ['gzip', 'deflate', 'br']) {
      expect(
        await post(server, { 'Content-Type': 'application/json', 'Content-Encoding': encoding }, [event('plain')]),
        encoding,
      ).toEqual({ status: 400, body: { detail: 'body could not be decompressed as its Content-Encoding says' } });
    }
    expect(
      (await post(server, { 'Content-Type': 'application/json; charset="UTF-8"' }, [event('quoted')])).status,
    ).toBe(200);
    expect(h.system.sessionHost.has('plain')).toBe(false);
  });

  it('answers a path that is not valid percent-encoding 400 naming it, and never repeats an identity value from the path', async () => {
    const { h } = await started();
    expect((await h.http.get('/api/sessions/%')).body).toEqual({ detail: 'path: not valid percent-encoding' });
    expect((await h.http.get('/api/sessions/%E0%A4')).body).toEqual({ detail: 'path: not valid percent-encoding' });
    const missing = await h.http.get('/v1/foo/ABCDE1234F/9876543210');
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toBe('no route for GET /v1/foo/**********/******3210');
    // As a URL carries them: an e-mail's @ and a spaced number's spaces percent-encoded.
    const encoded = await h.http.get('/x/ravi.kumar%40example.org/%2B91%2098127%2034650');
    expect(encoded.body.detail).toBe('no route for GET /x/****.*****@*******.***/+** ***** *4650');
    expect(h.logs.text).not.toMatch(/ravi\.kumar|98127|34650/);
    // A body nested too deep is named by its path, made of the client's keys: masked too.
    const deep = await h.http
      .post('/v1/events')
      .send(`{"session_id":"d","event":"x","jane.doe@example.com":${'['.repeat(40)}${']'.repeat(40)}}`)
      .set('Content-Type', 'application/json');
    expect(deep.status).toBe(422);
    expect(deep.body.detail).toMatch(/^body\.\*{4}\.\*{3}@\*{7}\.\*{3}\.0\.0.*: nested deeper than 32 levels$/);
  });

  it('treats an empty JSON body as {} (422 naming the missing field), as body-parser does', async () => {
    const { server } = await started();
    const res = await post(server, { 'Content-Type': 'application/json', 'Content-Length': '0' }, []);
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/session_id/);
  });
});
