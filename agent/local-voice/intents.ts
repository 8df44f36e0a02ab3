/**
 * What the scripted dialog understands (docs/reference/voice-agent.md, "Local voice"): a few requests of a
 * user stuck in the KYC flow. The recogniser decodes against this grammar only, so what it hears
 * is always one of these sentences, or nothing when no path through the grammar fits; speech on
 * another subject comes out as the nearest request (measured and discussed in
 * docs/decisions/0030-local-voice.md).
 */
export type Intent = 'explain' | 'document' | 'next' | 'repeat' | 'person' | 'greeting' | 'thanks';

/**
 * The grammar the recogniser decodes with, in JSGF. Every word must be in the recogniser's dictionary.
 * Each request takes only the lead-ins that fit it ("can you" repeat, "i want to" talk to a person),
 * and only polite words go before any: with every lead-in before every request, sentences such as
 * "i would like to what proof" fitted speech on other subjects and short requests alike
 * (docs/decisions/0030-local-voice.md, "What was measured").
 */
export const INTENT_GRAMMAR = `#JSGF V1.0;
grammar kyc;
public <utterance> = [<polite>] (<document> | <next> | <repeat> | <person> | <explain> | <greeting> | <thanks>) [please | now];
<polite> = please | okay | ok | sorry | hey | excuse me;
<document> = [tell me | can you tell me] (which | what) [kind of | type of] (document | documents | papers | proof | id)
             [do i need | should i (use | upload | give | show) | is needed | are needed | (can | do) i use | for this [step]]
           | do i need [any] (document | documents);
<next> = what [do i do | should i do | comes] next | what is next | what's next | [the | what is the] next step
       | what (do | should) i do now | how do i (continue | go on) | what now;
<repeat> = [can you | could you] (repeat [that | it] [again] | say (that | it) again) | come again | pardon | once more
         | i did not (hear | get) that;
<person> = [(i want | i need | i would like) to | can i | could i] (talk | speak) to (a [real] person | a human | an agent | someone)
         | connect me to (a person | a human | an agent) | customer (care | support) | a [real] person | a human;
<explain> = (why | what) is (this | the | my) (field | entry) wrong | (why | what) is (this | the | my) error
          | explain [the] (error | field | rule | problem) | what is wrong [with (this | it | the field)]
          | why (is it | was it) (rejected | wrong | not accepted) | what does (this | the) error mean | help [me] | i am stuck;
<greeting> = hello | hi | good morning | good evening;
<thanks> = thank you | thanks | bye | goodbye | that is all;
`;

const RULES: [Intent, RegExp][] = [
  ['person', /\b(person|human|agent|someone|customer (care|support))\b/],
  ['repeat', /\b(repeat|again|pardon|once more|did not (hear|get))\b/],
  ['document', /\b(documents?|papers|proof|id|card)\b/],
  ['next', /\bnext\b|\bwhat now\b|\bdo now\b|\bcontinue\b|\bgo on\b/],
  ['explain', /\b(wrong|error|explain|rejected|accepted|mean|field|entry|problem|rule|help|stuck)\b/],
  ['thanks', /\b(thank you|thanks|bye|goodbye|that is all)\b/],
  ['greeting', /^(hello|hi|good (morning|evening))$/],
];

/** The request a recognised sentence makes, or undefined when it makes none the dialog knows. */
export function intentOf(hypothesis: string): Intent | undefined {
  const words = hypothesis
    .toLowerCase()
    .replace(/\(\d+\)/g, '')
    .replace(/[^a-z' ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (words === '') return undefined;
  for (const [intent, rule] of RULES) if (rule.test(words)) return intent;
  return undefined;
}
