import { describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { createHarness } from '../support/harness.js';

/**
 * What an adversarial review sent to get an identity value past the redaction pass, each with the
 * surface it came back on. Every one must now come back masked.
 */
const post = (h: Harness, path: string, body: object) => h.http.post(path).send(body);
const context = async (h: Harness, id: string) =>
  JSON.stringify((await h.http.get(`/v1/assistant/context/${id}`)).body);
const session = async (h: Harness, id: string) => JSON.stringify((await h.http.get(`/api/sessions/${id}`)).body);

describe('identity values the review got past the detectors', () => {
  it('a phone, an Aadhaar and a date grouped with commas, bars, colons, double dashes, parentheses or named months', async () => {
    const h = createHarness();
    const text =
      'call me on (98765) 43210 or 98765,43210 or 98765|43210 or 98765:43210 or 98765 -- 43210; ' +
      'aadhaar 2345,6789,0124 or (2345) 6789 0124; born 15th of June 1995, 15 Jun 95, June 15 95, ' +
      '1995 June 15, 19950615';
    expect(
      (await post(h, '/v1/events', { session_id: 'r1', event: 'voice_conversation_turn', role: 'user', text })).status,
    ).toBe(200);
    const seen = await context(h, 'r1');
    for (const part of ['98765', '2345', 'June 1995', 'Jun 95', 'June 15', '19950615'])
      expect(seen).not.toContain(part);
    // A path a 404 names, and the log line of it.
    const missing = await h.http.get('/nope/2345,6789,0124');
    expect(missing.status).toBe(404);
    expect(`${missing.body.detail}\n${h.logs.text}`).not.toContain('2345,6789');
    // Fail closed (docs/explanation/privacy.md, "Limits we know of"): an amount's digits are a run of four or more like any other.
    await post(h, '/v1/events', {
      session_id: 'r1',
      event: 'component_input',
      component_id: 'income',
      properties: { income_range: '10,00,000 - 25,00,000' },
    });
    expect(await session(h, 'r1')).toContain('**,**,*** - **,**,***');
  });

  it('a value split by characters drawn as nothing, or written in look-alikes', async () => {
    const h = createHarness();
    const note =
      '🇦🇧🇨🇩🇪1234🇫, PAN ABCDE\u034f1234F, mobile 98765\ufe0f43210, again 98765\u3164432\u280010; ❾❽❼❻❺❹❸❷❶⓿, ➈➇➆➅➄➃➂➁➀⓿, 🅐🅑🅒🅓🅔1234🅕, АBCDE1234F, ABCDΕ1234F';
    await post(h, '/v1/events', {
      session_id: 'r2',
      event: 'component_input',
      properties: { note, phone: '🅐🅑🅒🅓🅔1234🅕' },
    });
    const seen = await session(h, 'r2');
    for (const part of ['🇦🇧🇨', 'ABCDE', '98765', '❾❽❼', '➈➇➆', '🅐🅑🅒', 'АBCDE', 'BCDE1234', 'ABCDΕ'])
      expect(seen).not.toContain(part);
    // A Russian word, and a flag, are left as written.
    await post(h, '/v1/events', {
      session_id: 'r2',
      event: 'component_input',
      properties: { greeting: 'Привет 🇮🇳 42' },
    });
    expect(await session(h, 'r2')).toContain('Привет 🇮🇳 42');
  });

  it(
    'a second review: any separator, line separators, marks on digits, dotted pairs, fractions ' +
      'in text, PAN digits split, more look-alikes and dates',
    async () => {
      const h = createHarness();
      const forms = [
        '98765;43210',
        '98765~43210',
        '98765·43210',
        '98765 + 43210',
        '[98765] 43210',
        '98765...43210',
        '98765 --- 43210',
        '98765、43210',
        '98765\\43210',
        '98765\u202843210',
        '9\ufe0f\u20e38\ufe0f\u20e37\ufe0f\u20e36\ufe0f\u20e35\ufe0f\u20e34\ufe0f\u20e33\ufe0f\u20e32\ufe0f\u20e31\ufe0f\u20e30\ufe0f\u20e3',
        '9\u03328\u03327\u03326\u03325\u03324\u03323\u03322\u03321\u03320\u0332',
        '98.76.54.32.10',
        '9876543210.5 rupees',
        '98,765 43,210',
        '9,876-543,210',
        'ABCDE;1234;F',
        'ABCDE 1 2 3 4 F',
        'A, B, C, D, E, 1, 2, 3, 4, F',
        'ᴀʙᴄᴅᴇ1234ꜰ',
        'ᎪᏴᏟᎠᎬ1234F',
        'ΑΒϹDΕ1234F',
        '⒜⒝⒞⒟⒠1234⒡',
        'ÀBCDE1234F',
        'Jun-15-1995',
        'June the 15th, 1995',
        "15 June '95",
        '15.06.95',
        '6/15/95',
        '15;06;1995',
        '1995_06_15',
      ];
      for (const [index, note] of forms.entries())
        await post(h, '/v1/events', { session_id: `f${index}`, event: 'component_input', note });
      for (const [index, note] of forms.entries()) {
        const seen = (await h.http.get(`/api/sessions/f${index}`)).body.latest_event.note as string;
        expect(seen, note).not.toBe(note);
        for (const secret of ['98765', '9876', 'ABCDE', 'BCDE', '1995', "'95", '15.06'])
          if (note.includes(secret)) expect(seen, note).not.toContain(secret);
      }
      // What must stay as written.
      // A host's address with its port names a machine (docs/explanation/privacy.md, "What is kept").
      const kept = ['10.0.0.12:8080', '2.4.1', 'screen_21', 'steps 1, 2, 3', '🇮🇳', 'Σοφία', 'José'];
      // Fail closed: four digits or more across separators are masked whatever they are.
      for (const [index, note] of ['10,00,000 - 25,00,000', '12:30:45.123'].entries()) {
        await post(h, '/v1/events', { session_id: `kc${index}`, event: 'component_input', note });
        expect((await h.http.get(`/api/sessions/kc${index}`)).body.latest_event.note).toBe(note.replace(/\d/g, '*'));
      }
      for (const [index, note] of kept.entries()) {
        await post(h, '/v1/events', { session_id: `k${index}`, event: 'component_input', note });
        expect((await h.http.get(`/api/sessions/k${index}`)).body.latest_event.note).toBe(note);
      }
    },
  );

  it(
    'a third review: look-alike groups apart from any Latin letter, more look-alike letters, a ' +
      'space on one side of @; a date with its time is masked too',
    async () => {
      const h = createHarness();
      const forms = [
        'ABCDE 1234 ꜰ',
        'ABCDE 1234 Ϝ',
        'ᴀʙᴄᴅᴇ 1234 ꜰ',
        'АВСЕН 1234 К',
        'ΑΒΕΗΚ 1234 Τ',
        'ᎪᏴᏟᎠᎬ 1234 Ꮯ',
        'Ꭺ Ᏼ Ꮯ Ꭰ Ꭼ 1 2 3 4 F',
        '15 ᴊᴜɴᴇ 1995',
        'ԌBCDE1234F',
        'ABCDE1234Ꭱ',
        'meera@ gmail.com',
        'meera @gmail.com',
      ];
      for (const [index, note] of forms.entries())
        await post(h, '/v1/events', { session_id: `t${index}`, event: 'component_input', note });
      for (const [index, note] of forms.entries()) {
        const seen = (await h.http.get(`/api/sessions/t${index}`)).body.latest_event.note as string;
        expect(seen, note).not.toBe(note);
        expect(seen, note).not.toMatch(/1995|meera|BCDE|ВСЕН|ΒΕΗΚ|ᴀʙᴄ|ᎪᏴᏟ/);
      }
      // Fail closed: a date with its time is a date, and its digits a run of four or more.
      const timed = ['2024-11-15 10:30:00', '11/15/2024 10:30 AM', '2024-11-15T10:30:00.123+05:30', 'Привет 2024 ОК'];
      for (const [index, note] of timed.entries()) {
        await post(h, '/v1/events', { session_id: `tk${index}`, event: 'component_input', note });
        expect((await h.http.get(`/api/sessions/tk${index}`)).body.latest_event.note).not.toMatch(/2024/);
      }
    },
  );

  it('a name under a key disguised with a digit, Hindi, a look-alike, an invisible character or fullwidth letters', async () => {
    const h = createHarness();
    await post(h, '/v1/events', {
      session_id: 'n1',
      event: 'component_input',
      properties: {
        name1: 'Meera Nair',
        applicant_name2: 'Meera Nair',
        naam: 'Meera Nair',
        नाम: 'मीरा नायर',
        'n\u0430me': 'Meera Nair',
        'na\u200bme': 'Meera Nair',
        ｎａｍｅ: 'Meera Nair',
      },
    });
    const seen = await session(h, 'n1');
    expect(seen).not.toMatch(/meera/i);
    expect(seen).not.toContain('मीरा');
  });

  it('a hint sent as masked with no mask at all is masked again: letters, or four digits (an OTP as much as a last four)', async () => {
    const h = createHarness();
    for (const [index, hint] of ['मीरा', 'Ravi'].entries()) {
      await post(h, '/v1/events', {
        session_id: `m${index}`,
        event: 'component_input',
        component_id: 'name_field',
        component_type: 'text_input',
        hint,
        masked: true,
      });
      expect(await session(h, `m${index}`)).not.toContain(hint);
    }
    await post(h, '/v1/events', {
      session_id: 'm9',
      event: 'component_input',
      component_id: 'phone_field',
      component_type: 'text_input',
      hint: '3210',
      masked: true,
    });
    expect(await session(h, 'm9')).toContain('"hint":"****"');
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
    await post(h, '/v1/events', {
      session_id: 'r5',
      event: 'component_input',
      component_id: 'name_field',
      component_type: 'text_input',
      hint: '*@Meera Nair',
      masked: true,
    });
    expect(await session(h, 'r5')).not.toContain('Meera');
    await post(h, '/v1/events', {
      session_id: 'r6',
      event: 'component_input',
      component_id: 'name_field',
      component_type: 'text_input',
      hint: 'मीरा नायर*',
      masked: true,
    });
    expect(await session(h, 'r6')).not.toContain('मीरा');
    // A deployed SDK's e-mail mask keeps its domain, which names nobody.
    await post(h, '/v1/events', {
      session_id: 'r7',
      event: 'component_input',
      component_id: 'email_field',
      component_type: 'text_input',
      hint: 'mee***@gmail.com',
      masked: true,
    });
    expect(await session(h, 'r7')).toContain('mee***@gmail.com');
  });

  it("a name under a key whose words say so, wherever the word 'name' stands in it", async () => {
    const h = createHarness();
    await post(h, '/v1/events', {
      session_id: 'r8',
      event: 'component_input',
      properties: {
        name_as_per_pan: 'MEERA NAIR',
        name_on_card: 'Meera Nair',
        nameOnCard: 'Meera Nair',
        names: ['Meera Nair'],
        applicant_name_en: 'Meera Nair',
        bank_name_en: 'State Bank',
      },
    });
    const seen = await session(h, 'r8');
    expect(seen).not.toMatch(/meera/i);
    // A thing's name stays readable, as `bank_name` does.
    expect(seen).toContain('State Bank');
  });
});

describe('identity values sent as JSON numbers', () => {
  it('an OTP typed into an OTP field and a date of birth as YYYYMMDD, both sent as numbers, reach no surface raw', async () => {
    const h = createHarness();
    const sent = {
      session_id: 'n1',
      event: 'component_input',
      component_id: 'otp_input',
      component_type: 'otp',
      hint: '__EMPTY__',
      properties: { entered: 482913, dob: 19950615, attempt: 2 },
    };
    expect((await post(h, '/v1/events', sent)).status).toBe(200);
    for (const seen of [await context(h, 'n1'), await session(h, 'n1')]) {
      expect(seen).not.toContain('482913');
      expect(seen).not.toContain('19950615');
      // A count stays a number.
      expect(seen).toContain('"attempt":2');
    }
    // Outside an OTP's event too: a number of four digits or more is read as its digits and masked (an
    // OTP without the word OTP), unless it is a documented numeric signal (docs/explanation/privacy.md, "What is kept").
    await post(h, '/v1/events', {
      session_id: 'n2',
      event: 'screen_view',
      properties: { code: 482913, born: 15061995, amount: 12345678, duration_ms: 48_000, count: 12 },
    });
    const other = await session(h, 'n2');
    for (const raw of ['482913', '15061995', '12345678']) expect(other).not.toContain(raw);
    expect(other).toContain('"duration_ms":48000');
    expect(other).toContain('"count":12');
  });
});

describe('an OTP told in words', () => {
  it('said or typed in a voice turn, on the OTP step or not, it reaches no surface raw; a code merely mentioned stays', async () => {
    const h = createHarness();
    const text = 'my otp is 482913, the verification code: 4829, ओटीपी 773 104, one-time password 12345678';
    expect(
      (
        await post(h, '/v1/events', {
          session_id: 'o1',
          event: 'voice_conversation_turn',
          properties: { role: 'user', channel: 'voice', text },
        })
      ).status,
    ).toBe(200);
    for (const seen of [await context(h, 'o1'), await session(h, 'o1')]) {
      for (const code of ['482913', '4829', '773 104', '12345678']) expect(seen).not.toContain(code);
    }
    await post(h, '/v1/events', {
      session_id: 'o2',
      event: 'voice_conversation_turn',
      properties: {
        role: 'agent',
        channel: 'voice',
        text: 'Enter the 6-digit OTP sent to you; it is valid for 10 minutes.',
      },
    });
    expect(await session(h, 'o2')).toContain('Enter the 6-digit OTP sent to you; it is valid for 10 minutes.');
  });

  it('forms the long property run found: digits glued to a long word and split, a PAN dotted like a host address, a bare code as an id', async () => {
    const h = createHarness();
    // An IFSC (its fifth character always 0) and a voter ID dotted like a host's address, in lower case.
    const forms = [
      'FAZMW6 1_6 1S',
      'FAZMW੬ ੧_੬ ੧S',
      'CYWmw૬ ૫ ૪ ૦L',
      'BHU CJ 1.2.5.4 T',
      'bhu.c-j.௧.௨.௫.௪.t',
      'vtnp 0.16.23.36',
      'the number is vtnp_০.১৬.২৩.৩৬',
      'vtnp 010.16.2.3',
      'abc 10.23.45.6',
    ];
    for (const [index, note] of forms.entries())
      await post(h, '/v1/events', { session_id: `lr${index}`, event: 'component_input', properties: { note } });
    for (const [index, note] of forms.entries()) {
      const seen = JSON.stringify((await h.http.get(`/api/sessions/lr${index}`)).body.latest_event.properties);
      for (const part of [
        'FAZMW',
        'CYWmw',
        'BHU',
        'bhu',
        '1_6',
        '1.2.5.4',
        'vtnp',
        '16.23',
        '০.১৬',
        '16.2.3',
        'abc',
        '23.45',
      ])
        if (note.includes(part)) expect(seen, note).not.toContain(part);
    }
    // A code of four digits or more alone is no identifier, wherever an identifier is kept.
    await post(h, '/v1/events', {
      session_id: 'lr-code',
      event: 'validation_error',
      screen: '2494',
      failure_reason_code: '14377',
      component_id: 'otp_field',
    });
    const seen = JSON.stringify((await h.http.get('/api/sessions/lr-code')).body);
    for (const code of ['2494', '14377']) expect(seen).not.toContain(code);
    expect(seen).toContain('otp_field');
    // A host's address with plain words beside it is kept.
    await post(h, '/v1/events', {
      session_id: 'lr-host',
      event: 'component_input',
      properties: { note: 'dns 127.0.0.53 down, host 10.0.0.12:8080', otp: 'code 4.31.8.16', gu: '૪૩.૧.૮૧.૬' },
    });
    const hosts = JSON.stringify((await h.http.get('/api/sessions/lr-host')).body.latest_event.properties);
    expect(hosts).toContain('dns 127.0.0.53 down, host 10.0.0.12:8080');
    // A public address's shape is no reason to keep digits: an OTP written as one is masked.
    for (const code of ['4.31.8.16', '૪૩.૧.૮૧.૬']) expect(hosts).not.toContain(code);
    // "Write your name as it is on the PAN card": the words after the label are no name; a name after it is.
    const instruction = 'अपना नाम वैसा ही लिखें जैसा पैन कार्ड पर है';
    await post(h, '/v1/events', {
      session_id: 'lr-hi',
      event: 'component_input',
      properties: { note: instruction, told: 'मेरा नाम रोहन मल्होत्रा है' },
    });
    const hindi = JSON.stringify((await h.http.get('/api/sessions/lr-hi')).body.latest_event.properties);
    expect(hindi).toContain(instruction);
    expect(hindi).not.toContain('रोहन');
  });
  it('a name whose first word is also a number word, after a label or in a sentence, with a number said beside it', async () => {
    const h = createHarness();
    const told = {
      label: 'Name: Sunya Rara',
      sentence: 'this is Sunya Akya here',
      hinglish: 'mera naam Ek Nath hai',
      both: 'I am Nau Rara, phone nine eight seven six five four three two one zero',
    };
    await post(h, '/v1/events', { session_id: 'lr-words', event: 'component_input', properties: told });
    const seen = JSON.stringify((await h.http.get('/api/sessions/lr-words')).body.latest_event.properties);
    for (const part of ['Sunya', 'Rara', 'Akya', 'Nath', 'Nau', 'nine eight']) expect(seen).not.toContain(part);
    // A number in words with no name beside it is still read as one, and the words around it stay.
    await post(h, '/v1/events', {
      session_id: 'lr-words2',
      event: 'component_input',
      properties: { note: 'my otp is shunya ek do teen, retry in two minutes' },
    });
    const note = JSON.stringify((await h.http.get('/api/sessions/lr-words2')).body.latest_event.properties);
    expect(note).not.toContain('shunya');
    expect(note).toContain('retry in two minutes');
  });
  it(
    'forms a fresh corpus found: a PAN told in parts after its label, a mail id and a UPI ' +
      'handle after theirs, spelled values, honorifics and Hindi name phrases',
    async () => {
      const h = createHarness();
      const told = [
        'PAN first part AQWPV',
        'pan ka pehla hissa EHJPL',
        'mail id anjali.deshmukh93',
        'UPI handle: ravi dot shankar eight eight at okaxis',
        'B for Bombay N for Nagpur Z for Zebra P for Pune K for Kolkata 4821 L',
        'alpha bravo charlie papa echo one two three four foxtrot',
        'Mr. Raghunathan',
        'Dr. Anand Krishnamurthy',
        'main Priya Nair hoon',
        'Sukhwinder bol raha hoon',
        'നാമം: അനിൽകുമാർ',
        'surname Iyengar, first name Padmavathi',
      ];
      // Under neutral keys (`note1`, …): a key that says PAN or name would mask its value whole anyway.
      await post(h, '/v1/events', {
        session_id: 'fc-1',
        event: 'component_input',
        properties: Object.fromEntries(told.map((text, i) => [`note${i}`, text])),
      });
      const seen = JSON.stringify((await h.http.get('/api/sessions/fc-1')).body.latest_event.properties);
      for (const part of [
        'AQWPV',
        'EHJPL',
        'anjali',
        'deshmukh',
        'ravi',
        'shankar',
        'Bombay',
        'Nagpur',
        'bravo',
        'papa',
        'Raghunathan',
        'Anand',
        'Priya',
        'Sukhwinder',
        'അനിൽ',
        'Iyengar',
        'Padmavathi',
      ]) {
        expect(seen, part).not.toContain(part);
      }
      // Ids and talk around the labels stay: the label alone, or joined into an id, masks nothing.
      const kept = {
        code: 'PAN_FORMAT',
        release: 'pan_details v2.4.1',
        talk: 'my PAN card upload failed. Please help',
        rule: 'Aadhaar is a 12 digit number',
        menu: 'go to the main menu',
      };
      await post(h, '/v1/events', { session_id: 'fc-2', event: 'component_input', properties: kept });
      const plain = (await h.http.get('/api/sessions/fc-2')).body.latest_event.properties;
      for (const [key, text] of Object.entries(kept)) expect(plain[key]).toBe(text);
    },
  );
});
