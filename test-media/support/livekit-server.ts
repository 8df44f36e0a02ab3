import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { openSync } from 'node:fs';
import { freePort } from '../../scripts/cluster/redis-server.js';
import { ensureLiveKitServer } from '../../scripts/media/livekit-install.js';
import { ExitedBeforeAnswering, waitUntilAnswering } from '../../scripts/wait-until-answering.js';

export interface LiveKitServer {
  /** http://127.0.0.1:port: what the service's server SDK is given. */
  url: string;
  /** ws://127.0.0.1:port: what participants and agent workers connect to. */
  wsUrl: string;
  apiKey: string;
  apiSecret: string;
  readonly pid: number;
  /** The environment the service needs to use this server. */
  env(): Record<string, string>;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

async function udpPortFree(port: number): Promise<boolean> {
  const socket = createSocket('udp4');
  const bound = await new Promise<boolean>((resolve) => {
    socket.once('error', () => resolve(false));
    socket.bind(port, '127.0.0.1', () => resolve(true));
  });
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return bound;
}

/** Two consecutive free loopback UDP ports: the server opens one media socket per core, up to the range's size. */
async function freeUdpPair(): Promise<[number, number]> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const start = 40_000 + Math.floor(Math.random() * 19_000);
    if ((await udpPortFree(start)) && (await udpPortFree(start + 1))) return [start, start + 1];
  }
  throw new Error('no two consecutive free UDP ports');
}

export interface LiveKitServerOptions {
  logFile?: string | undefined;
  /** Whether joining a room that does not exist creates it: the server's default, off here unless asked for. */
  autoCreateRooms?: boolean;
  /** Where the server sends its webhooks, signed with its key (docs/explanation/voice.md); none unless asked for. */
  webhookUrl?: string;
}

/**
 * One real LiveKit server (single node, no Redis) with everything on 127.0.0.1: signalling and
 * the Twirp API on a free port, media on a free UDP pair of the loopback interface only. The
 * node's address is given, so it never asks a STUN server for its public one; RTC over TCP is
 * off because the server would listen for it on every interface. Fresh API keys per server.
 */
export async function startLiveKitServer(options: LiveKitServerOptions = {}): Promise<LiveKitServer> {
  // Ports found free can be taken by another process before the server binds them (it then exits at once): try others.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnFreePorts(options);
    } catch (error) {
      if (!(error instanceof ExitedBeforeAnswering) || attempt >= 3) throw error;
    }
  }
}

async function startOnFreePorts(options: LiveKitServerOptions): Promise<LiveKitServer> {
  const bin = ensureLiveKitServer((line) => process.stderr.write(`${line}\n`));
  const port = await freePort();
  const [udpStart, udpEnd] = await freeUdpPair();
  const apiKey = `test${randomBytes(4).toString('hex')}`;
  const apiSecret = randomBytes(24).toString('hex');
  // JSON is YAML: the server reads it as its config body.
  const config = {
    port,
    bind_addresses: ['127.0.0.1'],
    keys: { [apiKey]: apiSecret },
    logging: { level: process.env.LIVEKIT_LOG_LEVEL ?? 'info' },
    rtc: {
      udp_port: `${udpStart}-${udpEnd}`,
      tcp_port: 0,
      node_ip: '127.0.0.1',
      use_external_ip: false,
      enable_loopback_candidate: true,
      interfaces: { includes: ['lo'] },
      ips: { includes: ['127.0.0.1/32'] },
    },
    turn: { enabled: false },
    // The service creates every room itself; an agent joining late must not bring a deleted room
    // back (docs/reference/voice-agent.md, "Faults"). The server's default (on) is what the stand-in follows.
    room: { auto_create: options.autoCreateRooms ?? false },
    ...(options.webhookUrl ? { webhook: { api_key: apiKey, urls: [options.webhookUrl] } } : {}),
  };
  const out = options.logFile ? openSync(options.logFile, 'a') : 'ignore';
  const url = `http://127.0.0.1:${port}`;
  const launch = async () => {
    const child = spawn(bin, ['--config-body', JSON.stringify(config)], { stdio: ['ignore', out, out] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await waitUntilAnswering(child, url, `livekit server (config ${JSON.stringify({ ...config, keys: '…' })})`, 30_000);
    return { child, exited };
  };
  let running = await launch();
  const stop = async () => {
    const { child, exited } = running;
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  };
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}`,
    apiKey,
    apiSecret,
    get pid() {
      return running.child.pid!;
    },
    env: () => ({ LIVEKIT_URL: `ws://127.0.0.1:${port}`, LIVEKIT_API_KEY: apiKey, LIVEKIT_API_SECRET: apiSecret }),
    stop,
    /** Killed at once and started again on the same ports and keys: a restart that forgets every room. */
    async restart() {
      process.kill(running.child.pid!, 'SIGKILL');
      await running.exited;
      running = await launch();
    },
  };
}
