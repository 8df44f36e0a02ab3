import { dispose } from '@livekit/rtc-node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ChatRequest, ModelScript } from './model-stand-in.js';
import type { MediaStack, MediaStackOptions } from './media-stack.js';
import { startMediaStack } from './media-stack.js';
import type { SimulatedUser } from './simulated-user.js';

/**
 * One media stack for a test file: started before its tests, the users a test joined left after
 * each, and everything stopped after the file (rtc-node's native side disposed last).
 */
export function mediaSuite(options: MediaStackOptions): { stack: () => MediaStack; users: SimulatedUser[] } {
  let stack: MediaStack | undefined;
  const users: SimulatedUser[] = [];
  beforeAll(async () => {
    stack = await startMediaStack(options);
  });
  afterEach(async () => {
    for (const user of users.splice(0)) await user.leave().catch(() => {});
  });
  afterAll(async () => {
    await stack?.stop();
    await dispose();
  });
  return {
    stack: () => {
      if (!stack) throw new Error('the media stack did not start');
      return stack;
    },
    users,
  };
}

/** The user's last words in a chat request. */
export const lastUserText = (request: ChatRequest): string =>
  String(request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '');

/**
 * A model that calls a tool when the user's last words match, says `afterTool` once the tool
 * answered, and `otherwise` to anything else: how the stand-in drives an agent's tools.
 */
export function toolModel(
  tools: { when: RegExp; name: string; arguments: Record<string, unknown> }[],
  afterTool: string,
  otherwise: string,
): ModelScript['reply'] {
  return (request) => {
    const last = request.messages.at(-1);
    if (last?.role === 'tool') return afterTool;
    const tool = last?.role === 'user' ? tools.find(({ when }) => when.test(lastUserText(request))) : undefined;
    return tool ? { toolCall: { name: tool.name, arguments: tool.arguments } } : otherwise;
  };
}
