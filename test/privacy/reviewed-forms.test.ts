import { describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { createHarness } from '../support/harness.js';

/**
 * What an adversarial review sent to get an identity value past the redaction pass, each with the
 * surface it came back on. Every one must now come back masked.
 */
const post = (h: Harness, path: string, body: object) => h.http.post(path).send(body);
const context = async (h: Harness, id: string) => JSON.stringify((await h.http.get(`/v1/assistant/context/${id}`)).body);
const session = async (h: Harness, id: string) => JSON.stringify((await h.http.get(`/api/sessions/${id}`)).body);

describe('identity values the review got past the detectors', () => {
  it('a phone, an Aadhaar and a date grouped with commas, bars, colons, double dashes, parentheses or named months', async () => {
    const h = createHarness();
    const text = 'call me on (98765) 43210 or 98765,43210 or 98765|43210 or 98765:43210 or 98765 -- 43210; aadhaar 2345,6789,0124 or (2345) 6789 0124; born 15th of June 1995, 15 Jun 95, June 15 95, 1995 June 15, 19950615';
    expect((await post(h, '/v1/events', { session_id: 'r1', event: 'voice_conversation_turn', role: 'user', text })).status).toBe(200);
    const seen = await context(h, 'r1');
    for (const part of ['98765', '2345', 'June 1995', 'Jun 95', 'June 15', '19950615']) expect(seen).not.toContain(part);
    // A path a 404 names, and the log line of it.
    const missing = await h.http.get('/nope/2345,6789,0124');
    expect(missing.status).toBe(404);
    expect(`${missing.body.detail}\n${h.logs.text}`).not.toContain('2345,6789');
    // Amounts stay readable: a range of incomes is not an identity value.
    await post(h, '/v1/events', { session_id: 'r1', event: 'component_input', component_id: 'income', properties: { income_range: '10,00,000 - 25,00,000' } });
    expect(await session(h, 'r1')).toContain('10,00,000 - 25,00,000');
  });

  it('a value split by characters drawn as nothing, or written in look-alikes', async () => {
    const h = createHarness();
    const note = '🇦🇧🇨🇩🇪1234🇫, PAN ABCDE\u034f1234F, mobile 98765\ufe0f43210, again 98765\u3164432\u280010; ❾❽❼❻❺❹❸❷❶⓿, ➈➇➆➅➄➃➂➁➀⓿, 🅐🅑🅒🅓🅔1234🅕, АBCDE1234F, ABCDΕ1234F';
    await post(h, '/v1/events', { session_id: 'r2', event: 'component_input', properties: { note, phone: '🅐🅑🅒🅓🅔1234🅕' } });
    const seen = await session(h, 'r2');
    for (const part of ['🇦🇧🇨', 'ABCDE', '98765', '❾❽❼', '➈➇➆', '🅐🅑🅒', 'АBCDE', 'BCDE1234', 'ABCDΕ']) expect(seen).not.toContain(part);
    // A Russian word, and a flag, are left as written.
    await post(h, '/v1/events', { session_id: 'r2', event: 'component_input', properties: { greeting: 'Привет 🇮🇳 42' } });
    expect(await session(h, 'r2')).toContain('Привет 🇮🇳 42');
  });

  it('a session id grouped with colons is read as the value it is, and digested', async () => {
    const h = createHarness();
    for (const id of ['98765:43210', 'ABCDE:1234:F', '2345:6789:0124']) {
      const res = await post(h, '/v1/assistant/session/start', { session_id: id, user_id: 'u1' });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain(id);
    }
  });

  it("a client's mask that leaves a name after its @, or a Devanagari name, is masked again", async () => {
    const h = createHarness();
    await post(h, '/v1/events', { session_id: 'r5', event: 'component_input', component_id: 'name_field', component_type: 'text_input', hint: '*@Meera Nair', masked: true });
    expect(await session(h, 'r5')).not.toContain('Meera');
    await post(h, '/v1/events', { session_id: 'r6', event: 'component_input', component_id: 'name_field', component_type: 'text_input', hint: 'मीरा नायर*', masked: true });
    expect(await session(h, 'r6')).not.toContain('मीरा');
    // A deployed SDK's e-mail mask keeps its domain, which names nobody.
    await post(h, '/v1/events', { session_id: 'r7', event: 'component_input', component_id: 'email_field', component_type: 'text_input', hint: 'mee***@gmail.com', masked: true });
    expect(await session(h, 'r7')).toContain('mee***@gmail.com');
  });

  it("a name under a key whose words say so, wherever the word 'name' stands in it", async () => {
    const h = createHarness();
    await post(h, '/v1/events', { session_id: 'r8', event: 'component_input', properties: { name_as_per_pan: 'MEERA NAIR', name_on_card: 'Meera Nair', nameOnCard: 'Meera Nair', names: ['Meera Nair'], applicant_name_en: 'Meera Nair', bank_name_en: 'State Bank' } });
    const seen = await session(h, 'r8');
    expect(seen).not.toMatch(/meera/i);
    // A thing's name stays readable, as `bank_name` does.
    expect(seen).toContain('State Bank');
  });
});
