import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signature, webhookHeaders } from '../../src/integrations/webhook-signature.js';
import { retryDelayMs } from '../../src/domain/webhook-message.js';

const secretOf = (bytes: Uint8Array) => `whsec_${Buffer.from(bytes).toString('base64')}`;

describe('Standard Webhooks signatures', () => {
  it("match the specification's test vector", () => {
    // From the Standard Webhooks specification's reference libraries.
    expect(
      signature(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('are what the standardwebhooks package signs, for any secret, id, time and body', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 24, maxLength: 64 }),
        fc.stringMatching(/^msg_[A-Za-z0-9]{1,40}$/),
        fc.integer({ min: 0, max: 4_000_000_000 }),
        fc.string({ unit: 'grapheme' }),
        (key, id, seconds, body) => {
          const secret = secretOf(key);
          expect(signature(secret, id, seconds, body)).toBe(
            new Webhook(secret).sign(id, new Date(seconds * 1000), body),
          );
        },
      ),
    );
  });

  it('carry one signature per secret during a rotation, each verified by the package alone', () => {
    const [old, fresh] = [secretOf(randomBytes(32)), secretOf(randomBytes(32))];
    const body = JSON.stringify({ type: 'call.ended', timestamp: new Date().toISOString(), data: {} });
    const headers = webhookHeaders([old, fresh], 'msg_1', Math.floor(Date.now() / 1000), body);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(old).verify(body, headers)).toMatchObject({ type: 'call.ended' });
    expect(new Webhook(fresh).verify(body, headers)).toMatchObject({ type: 'call.ended' });
    expect(() => new Webhook(secretOf(randomBytes(32))).verify(body, headers)).toThrow(/signature/i);
    expect(() => new Webhook(old).verify(`${body} `, headers)).toThrow(/signature/i);
  });
});

describe('retry delays', () => {
  it('grow exponentially from 5 s to an hour, with jitter in the upper half', () => {
    expect(retryDelayMs(1, 0)).toBe(2_500);
    expect(retryDelayMs(1, 0.999_999)).toBeCloseTo(5_000, -1);
    expect(retryDelayMs(4, 0.5)).toBe(30_000);
    expect(retryDelayMs(30, 1)).toBe(3_600_000);
    for (let attempt = 1; attempt < 20; attempt += 1)
      expect(retryDelayMs(attempt + 1, 0)).toBeGreaterThanOrEqual(retryDelayMs(attempt, 0));
  });
});
