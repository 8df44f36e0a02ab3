import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, tempDataDir } from '../support/harness.js';
import type { SummaryModelAnswer } from '../support/summary-model-stand-in.js';
import { startSummaryModelStandIn } from '../support/summary-model-stand-in.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const SESSION = 'summary-s1';
const RAW_PAN = 'ABCPE1234F';
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function modelStandIn(answer: SummaryModelAnswer) {
  const model = await startSummaryModelStandIn(answer);
  closers.push(() => model.close());
  return model;
}

async function harnessWith(modelUrl: string) {
  const receiver = new WebhookReceiver(SECRET);
  const url = await receiver.start();
  closers.push(() => receiver.stop());
  const h = createHarness({
    env: {
      STORE: 'sqlite',
      DATA_DIR: tempDataDir(),
      WEBHOOK_URL: url,
      WEBHOOK_SECRET: SECRET,
      CALL_SUMMARY_MODEL_BASE_URL: modelUrl,
      CALL_SUMMARY_MODEL: 'summary-model',
    },
    startAt: Date.now(),
  });
  await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION, screen: 'pan_details' }).expect(200);
  await h.http
    .post('/v1/assistant/consent')
    .send({ session_id: SESSION, decision: 'given', notice_version: 'default-1', language: 'en' })
    .expect(200);
  await h.http
    .post('/v1/events')
    .send({
      session_id: SESSION,
      event: 'voice_conversation_turn',
      properties: { role: 'user', text: `my PAN ${RAW_PAN} is refused` },
    })
    .expect(200);
  await h.http
    .post('/v1/events')
    .send({
      session_id: SESSION,
      event: 'voice_conversation_turn',
      properties: { role: 'agent', text: 'Check the fourth letter.' },
    })
    .expect(200);
  await h.http.post('/v1/assistant/session/stop').send({ session_id: SESSION }).expect(200);
  return { h, receiver };
}

describe('the call summary from a language model', () => {
  it('is written from the masked transcript and the record, kept in the report, and the call.ended waits for it', async () => {
    const model = await modelStandIn({
      status: 200,
      text: 'The user could not get the PAN accepted; the assistant pointed at the fourth letter.',
    });
    const { h, receiver } = await harnessWith(model.url);
    await h.system.callUpkeep!.round();

    expect(model.requests).toHaveLength(1);
    const [request] = model.requests;
    expect(request!.path).toBe('/v1/chat/completions');
    expect(request!.body.model).toBe('summary-model');
    const sent = JSON.stringify(request!.body);
    expect(sent).toContain('Check the fourth letter.');
    expect(sent).toContain('pan_details');
    expect(sent).not.toContain(RAW_PAN);

    const [call] = (await h.http.get(`/api/sessions/${SESSION}/calls`).expect(200)).body.calls;
    expect(call.report).toMatchObject({
      summary: 'The user could not get the PAN accepted; the assistant pointed at the fourth letter.',
      summary_source: 'model',
    });
    const [ended] = receiver.messages('call.ended');
    expect(ended!.data.report).toEqual(call.report);
  });

  it('falls back to the summary composed from the record when the model fails, and the call.ended still goes', async () => {
    const model = await modelStandIn({ status: 500 });
    const { h, receiver } = await harnessWith(model.url);
    await h.system.callUpkeep!.round();
    expect(model.requests).toHaveLength(1);
    const [call] = (await h.http.get(`/api/sessions/${SESSION}/calls`).expect(200)).body.calls;
    expect(call.report).toMatchObject({ summary_source: 'record', summary: expect.stringContaining('pan_details') });
    expect(receiver.messages('call.ended')[0]!.data.report).toEqual(call.report);
  });
});
