import { llm } from '@livekit/agents';
import { scrubText } from '../src/domain/pii/scrub.js';

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
  copy.items = copy.items.map((item) => {
    if (item.type !== 'message') return item;
    if (item.id === INSTRUCTIONS_ID && item.role === 'system' && prompt !== undefined) {
      return llm.ChatMessage.create({ id: item.id, role: 'system', content: [prompt], createdAt: item.createdAt });
    }
    if (item.role !== 'user') return item;
    let changed = false;
    const content = item.content.map((part) => {
      if (typeof part !== 'string') return part;
      const scrubbed = scrubText(part).text;
      changed ||= scrubbed !== part;
      return scrubbed;
    });
    return changed ? llm.ChatMessage.create({ id: item.id, role: 'user', content, createdAt: item.createdAt }) : item;
  });
  return copy;
}
