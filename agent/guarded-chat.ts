import { llm } from '@livekit/agents';
import { maskCall } from './split-values.js';

/** The id the agents framework gives the instructions message in a chat context. */
const INSTRUCTIONS_ID = 'lk.agent_task.instructions';

/** What a message says: its text parts. */
const saidIn = (item: llm.ChatMessage): string =>
  item.content.filter((part): part is string => typeof part === 'string').join(' ');

/**
 * The chat a model request carries, made safe and current: the instructions replaced by the
 * newest system prompt (a refresh may have landed after this turn's context was copied), and
 * every user and assistant message masked across the whole call (split-values.ts), so a value
 * said in pieces over any number of turns, or the assistant's echo of one, never reaches a model
 * provider. Returns a copy; the session's own history is untouched.
 */
export function guardedChat(chat: llm.ChatContext, prompt: string | undefined): llm.ChatContext {
  const copy = chat.copy();
  const talk = copy.items.filter(
    (item): item is llm.ChatMessage => item.type === 'message' && (item.role === 'user' || item.role === 'assistant'),
  );
  const masked = maskCall(talk.map((item) => ({ role: item.role as 'user' | 'assistant', text: saidIn(item) })));
  const maskedOf = new Map(talk.map((item, index) => [item, masked[index]!]));
  copy.items = copy.items.map((item) => {
    if (item.type !== 'message') return item;
    if (item.id === INSTRUCTIONS_ID && item.role === 'system' && prompt !== undefined) {
      return llm.ChatMessage.create({ id: item.id, role: 'system', content: [prompt], createdAt: item.createdAt });
    }
    const text = maskedOf.get(item);
    if (text === undefined || text === saidIn(item)) return item;
    // Text parts become the one masked text; anything else (an image, audio) is kept.
    const content = [text, ...item.content.filter((part) => typeof part !== 'string')];
    return llm.ChatMessage.create({ id: item.id, role: item.role, content, createdAt: item.createdAt });
  });
  return copy;
}
