import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { createMachine } from 'xstate';
import { exportableConfig } from '../../src/machines/machine-export.js';
import { sessionMachine } from '../../src/machines/session/machine.js';
import { built } from '../support/service-process.js';

const run = promisify(execFile);

/** A guard's name; an inline `and`/`or` guard as its parts joined by the operator (how the export names it). */
function guardName(guard: unknown): string {
  if (guard === undefined) return '-';
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const { name, guards } = guard as unknown as { name: string; guards: unknown[] };
    return guards.map(guardName).join(` ${name} `);
  }
  return String((guard as { type: unknown }).type);
}

/** The diagram of a machine: every state node, transition (with its guard and targets) and invoked actor. */
function diagram(machine: AnyStateMachine): string[] {
  const lines: string[] = [];
  const visit = (node: AnyStateNode) => {
    lines.push(`${node.id} ${node.type}`);
    for (const [event, transitions] of node.transitions) {
      for (const transition of transitions) {
        lines.push(
          `${node.id} on ${event} [${guardName(transition.guard)}] -> ${transition.target?.map((target) => target.id).join(',') ?? '(stays)'}`,
        );
      }
    }
    for (const transition of node.always ?? [])
      lines.push(
        `${node.id} always [${guardName(transition.guard)}] -> ${transition.target?.map((target) => target.id).join(',')}`,
      );
    for (const invoked of node.invoke) lines.push(`${node.id} invokes ${String(invoked.src)}`);
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(machine.root);
  return lines.sort();
}

describe('npm run export:machine', () => {
  it('writes the session machine as JSON with its five regions, their states and the named delays and actors', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'machine-export-')), 'nested', 'session-machine.json');
    const { stdout } = await run(process.execPath, [built('scripts/export-machine.ts'), path]);
    expect(stdout).toBe(`wrote ${path}\n`);
    const config = JSON.parse(readFileSync(path, 'utf8')) as {
      id: string;
      type: string;
      states: Record<string, { initial: string; states: Record<string, Record<string, unknown>> }>;
    };

    expect(config).toMatchObject({ id: 'session', type: 'parallel' });
    const regions = config.states;
    expect(Object.keys(regions)).toEqual(['voice', 'trigger', 'presence', 'reengagement', 'agent']);
    expect(Object.keys(regions.voice!.states)).toEqual(['inactive', 'starting', 'active', 'stopping']);
    expect(Object.keys(regions.voice!.states.starting!.states as object)).toEqual([
      'planning',
      'creatingRoom',
      'checkingAgent',
      'replacingDispatch',
      'findingAgent',
      'dispatchingAgent',
      'mintingToken',
    ]);
    expect(Object.keys(regions.agent!.states)).toEqual([
      'idle',
      'awaiting',
      'checking',
      'redispatching',
      'joined',
      'rechecking',
    ]);
    expect(Object.keys(regions.trigger!.states)).toEqual(['ready', 'cooldown']);
    expect(Object.keys(regions.presence!.states)).toEqual(['live', 'expired']);
    expect(Object.keys(regions.reengagement!.states)).toEqual(['idle', 'armed']);
    expect(regions.trigger!.states.cooldown).toEqual({
      after: { triggerCooldown: 'ready' },
      on: { 'trigger.fired': { target: 'cooldown', reenter: true } },
    });
    // The host sends the idle check (docs/decisions/0043-the-idle-check-sent-by-the-host.md).
    expect(regions.presence!.states.live).toEqual({
      on: {
        'session.idle_check': [
          { guard: 'idleCheckNotDue' },
          { guard: 'voiceInactive and noReengagementArmed and idleForTtl', target: 'expired' },
          { actions: 'rearmIdleTimer' },
        ],
      },
    });
    expect(JSON.stringify(regions.voice!.states.starting)).toContain('"src":"mintToken"');
  });

  it('loses nothing of the diagram: the exported config builds a machine with the same states, transitions, guards and actors', () => {
    const exported = JSON.parse(JSON.stringify(exportableConfig(sessionMachine))) as Parameters<
      typeof createMachine
    >[0];
    expect(diagram(createMachine(exported))).toEqual(diagram(sessionMachine));
    expect(diagram(sessionMachine).length).toBeGreaterThan(40);
  });

  it('docs/session-machine.json is the current machine (regenerate it with npm run export:machine)', () => {
    const committed = readFileSync('docs/session-machine.json', 'utf8');
    expect(committed).toBe(`${JSON.stringify(exportableConfig(sessionMachine), null, 2)}\n`);
  });
});
