import type { Intent } from '../../agent/local-voice/intents.js';

/**
 * The fixed set the local recogniser's intent accuracy is measured on (docs/reference/voice-agent.md,
 * "Local voice"): what a user stuck in the KYC flow says, each phrase spoken by espeak-ng with one
 * of several voices and speeds, and a few sentences the dialog does not handle, which must come
 * out as no request rather than as the nearest one.
 */
export interface SpokenPhrase {
  text: string;
  /** undefined: no request the dialog knows. */
  intent: Intent | undefined;
}

export const KYC_PHRASES: SpokenPhrase[] = [
  { text: 'Which document do I need?', intent: 'document' },
  { text: 'What documents should I upload?', intent: 'document' },
  { text: 'What proof can I use?', intent: 'document' },
  { text: 'Which ID do I need?', intent: 'document' },
  { text: 'Do I need any documents?', intent: 'document' },
  { text: 'What kind of document is needed?', intent: 'document' },
  { text: 'Which card should I use?', intent: 'document' },
  { text: 'Tell me which papers are needed', intent: 'document' },
  { text: 'What should I do next?', intent: 'next' },
  { text: 'What is the next step?', intent: 'next' },
  { text: 'What do I do now?', intent: 'next' },
  { text: "What's next?", intent: 'next' },
  { text: 'How do I continue?', intent: 'next' },
  { text: 'Okay, what comes next?', intent: 'next' },
  { text: 'What now?', intent: 'next' },
  { text: 'Repeat that please', intent: 'repeat' },
  { text: 'Can you say that again?', intent: 'repeat' },
  { text: 'Sorry, come again?', intent: 'repeat' },
  { text: 'Pardon?', intent: 'repeat' },
  { text: 'Could you repeat it?', intent: 'repeat' },
  { text: 'I did not hear that', intent: 'repeat' },
  { text: 'Once more please', intent: 'repeat' },
  { text: 'I want to talk to a person', intent: 'person' },
  { text: 'Can I speak to a human?', intent: 'person' },
  { text: 'Connect me to an agent', intent: 'person' },
  { text: 'I would like to speak to a real person', intent: 'person' },
  { text: 'Customer care please', intent: 'person' },
  { text: 'Talk to someone', intent: 'person' },
  { text: 'Why is this field wrong?', intent: 'explain' },
  { text: 'Explain the error', intent: 'explain' },
  { text: 'What is wrong with this?', intent: 'explain' },
  { text: 'Why was it rejected?', intent: 'explain' },
  { text: 'What does the error mean?', intent: 'explain' },
  { text: 'Help me please', intent: 'explain' },
  { text: 'I am stuck', intent: 'explain' },
  { text: 'Why is it not accepted?', intent: 'explain' },
  { text: 'What document do I need for this step?', intent: 'document' },
  { text: 'Which documents are needed?', intent: 'document' },
  { text: 'What should I do now?', intent: 'next' },
  { text: 'What comes next?', intent: 'next' },
  { text: 'Say it again', intent: 'repeat' },
  { text: 'Repeat please', intent: 'repeat' },
  { text: 'I need to talk to a human', intent: 'person' },
  { text: 'Can I talk to an agent?', intent: 'person' },
  { text: 'What is wrong with the field?', intent: 'explain' },
  { text: 'Explain the problem', intent: 'explain' },
  { text: 'Why is my entry wrong?', intent: 'explain' },
  { text: 'What does this error mean?', intent: 'explain' },
  { text: 'What is the weather today?', intent: undefined },
  { text: 'Play some music', intent: undefined },
  { text: 'How much does a loan cost?', intent: undefined },
  { text: 'Who won the cricket match?', intent: undefined },
  { text: 'My number is nine eight seven six five', intent: undefined },
  { text: 'Where is the train station?', intent: undefined },
];

/** espeak-ng voices and speeds (words per minute) the phrases are spoken with, in turn. */
export const SPEAKERS: { voice: string; speed: number }[] = [
  { voice: 'en-us', speed: 160 },
  { voice: 'en-gb', speed: 175 },
  { voice: 'en-us+f3', speed: 140 },
  { voice: 'en-gb-scotland', speed: 150 },
  { voice: 'en-029', speed: 190 },
  { voice: 'en-us+m3', speed: 210 },
];
