// What the privacy rules find, and how a found value is described without its characters.

export type PiiKind =
  | 'email'
  | 'upi'
  | 'date'
  | 'aadhaar'
  | 'vid'
  | 'card'
  | 'phone'
  | 'number'
  | 'gstin'
  | 'pan'
  | 'driving_licence'
  | 'vehicle'
  | 'voter_id'
  | 'passport'
  | 'ifsc'
  | 'address'
  | 'name'
  | 'otp'
  | 'text'
  | 'dropped';

export interface ValueShape {
  length: number;
  digits: number;
  letters: number;
  kind?: PiiKind;
}

export interface Finding {
  kind: PiiKind;
  shape: ValueShape;
}

const LETTER = /\p{L}/u;
const DIGIT = /\p{Nd}/u;

export function shapeOf(value: string, kind?: PiiKind): ValueShape {
  let digits = 0;
  let letters = 0;
  let length = 0;
  for (const char of value) {
    length += 1;
    const code = char.charCodeAt(0);
    // ASCII answered by code, the rest by Unicode class.
    if (code < 128) {
      if (code >= 48 && code <= 57) digits += 1;
      else if ((code | 32) >= 97 && (code | 32) <= 122) letters += 1;
    } else if (DIGIT.test(char)) digits += 1;
    else if (LETTER.test(char)) letters += 1;
  }
  return kind === undefined ? { length, digits, letters } : { length, digits, letters, kind };
}
