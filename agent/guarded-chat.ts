import { llm } from '@livekit/agents';
import { scrubText } from '../src/domain/pii/scrub.js';
import { valueSpansTurns, withoutDigits } from './split-values.js';

/** The id the agents framework gives the instructions message in a chat context. */
const INSTRUCTIONS_ID = 'lk.agent_task.instructions';

/**
 * The chat a model request carries, made safe and current: the instructions replaced by the
 * newest system prompt (a refresh may have landed after this turn's context was copied), and
 * identity values the user said or typed masked as the service masks them, so a PAN read out
 * loud never reaches a model provider. Returns a copy; the session's own history is untouched.
 */
export function guardedChat(chat: llm.ChatContext, prompt: string | undefined): llm.ChatContext {
  const copy = chat.copy();
  const split = turnsSplittingAValue(copy.items);
  copy.items = copy.items.map((item) => {
    if (item.type !== 'message') return item;
    if (item.id === INSTRUCTIONS_ID && item.role === 'system' && prompt !== undefined) {
      return llm.ChatMessage.create({ id: item.id, role: 'system', content: [prompt], createdAt: item.createdAt });
    }
    if (item.role !== 'user') return item;
    const guard = split.has(item) ? withoutDigits : (part: string) => scrubText(part).text;
    let changed = false;
    const content = item.content.map((part) => {
      if (typeof part !== 'string') return part;
      const scrubbed = guard(part);
      changed ||= scrubbed !== part;
      return scrubbed;
    });
    return changed ? llm.ChatMessage.create({ id: item.id, role: 'user', content, createdAt: item.createdAt }) : item;
  });
  return copy;
}

/** What the user said in a message: its text parts. */
const saidIn = (item: llm.ChatMessage): string => item.content.filter((part): part is string => typeof part === 'string').join(' ');

/**
 * The user's messages that hold part of a value said across two of them, one after the other
 * (split-values.ts): every request carries the whole history, so both halves would reach the model.
 */
function turnsSplittingAValue(items: llm.ChatItem[]): Set<llm.ChatItem> {
  const split = new Set<llm.ChatItem>();
  let previous: llm.ChatMessage | undefined;
  for (const item of items) {
    if (item.type !== 'message' || item.role !== 'user') continue;
    if (previous !== undefined && valueSpansTurns(saidIn(previous), saidIn(item))) split.add(previous).add(item);
    previous = item;
  }
  return split;
}
